// Sequences: the list (with each one's enrollments by state), a new one, and a
// sequence's page: its state changes, per-step stats, enrolling a subscriber by
// address, a test event for an event trigger, one subscriber's timeline, and
// its definition's editor.
import { html, useState, useEffect } from './preact-htm.js';
import { api, subscribe, onStreamOpen, Problem } from './api.js';
import { Field, ErrorBox, Empty, fieldError, useLoad, when, num, go, explain, PageHeader, toast } from './ui.js';
import { usePaged, Pager } from './pager.js';
import { SequenceForm } from './sequence_form.js';
import { SequenceStats, Enrollments, useNames } from './sequence_stats.js';
import { can } from './perm.js';

/** Words for a trigger. @param {any} t @param {Map<number,string>} [lists] */
export function describeTrigger(t, lists) {
  const list = t.list_id ? (lists && lists.get(t.list_id)) || `list ${t.list_id}` : '';
  switch (t.type) {
    case 'manual': return 'enrolled by hand' + (list ? `, members of ${list}` : '');
    case 'list_joined': return `joins ${list}`;
    case 'confirmed': return `a confirmed subscriber joins ${list}`;
    case 'event': return `event ${t.event}` + (list ? `, members of ${list}` : '');
    case 'date_attribute': {
      const off = t.offset_days || 0;
      const rel = off === 0 ? 'on' : off > 0 ? `${off} days after` : `${-off} days before`;
      return `${rel} attributes.${t.attribute} at ${t.at || '09:00'}` + (list ? `, members of ${list}` : '');
    }
    case 'segment_entered': return `enters segment ${t.segment_id}` + (list ? `, members of ${list}` : '');
    default: return t.type;
  }
}

/** A map of the account's list ids to names (the first 200). */
function useListNames() {
  const [lists] = useLoad(() => api('GET', '/v1/lists?limit=200'));
  return new Map(lists ? lists.data.map((/** @type {any} */ l) => [l.id, l.name]) : []);
}

/**
 * Each listed sequence's enrollments by state (its stats), asked two at a time: a
 * page of 50 asked at once would be shed by a busy API (503), not answered sooner.
 * @param {number[]} ids
 * @returns {Map<number, any>} id → the stats, or null when they could not be had
 */
function useCounts(ids) {
  const [counts, setCounts] = useState(/** @type {Map<number, any>} */ (new Map()));
  useEffect(() => {
    let live = true;
    const queue = [...ids];
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined && live; id = queue.shift()) {
        let stats = null;
        try { stats = await api('GET', `/v1/sequences/${id}/stats`); } catch { /* shown as unknown */ }
        const n = /** @type {number} */ (id);
        if (live) setCounts((m) => new Map(m).set(n, stats));
      }
    };
    worker();
    worker();
    return () => { live = false; };
  }, [ids.join(',')]);
  return counts;
}

/** @param {{stats:any}} p */
function Counts({ stats }) {
  if (stats === undefined) return html`<span>…</span>`;
  if (stats === null) return html`<span>—</span>`;
  const e = stats.enrollments || {};
  return html`<span data-enrolled=${(e.active || 0) + (e.completed || 0) + (e.exited || 0)}>${num(e.active)} active, ${num(e.completed)} completed, ${num(e.exited)} exited</span>`;
}

export function Sequences() {
  const paged = usePaged('/v1/sequences?limit=50');
  const { page, error } = paged;
  const lists = useListNames();
  const counts = useCounts(page ? page.data.map((/** @type {any} */ s) => s.id) : []);
  return html`<${PageHeader} title="Sequences">${can('sequences:write') && html`<a class="button primary" href="#/sequences/new">New sequence</a>`}</${PageHeader}>
    <p>Automated emails on a trigger and after delays; each step reaches each subscriber once.</p>
    <${ErrorBox} error=${error} />
    ${page && page.data.length === 0 && html`<${Empty} title="No sequences yet.">
      <p><a href="#/sequences/new">Create one</a>: a trigger (someone joins a list, an event of your application, a date) and its steps (send, wait, condition, wait for an event).</p></${Empty}>`}
    ${page && page.data.length > 0 && html`<div class="table-wrap"><table class="sequences">
      <caption class="sr-only">Sequences</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Trigger</th><th scope="col">Status</th><th scope="col">Steps</th><th scope="col">Enrollments</th></tr></thead>
      <tbody>${page.data.map((/** @type {any} */ s) => html`<tr key=${s.id}>
        <td><a href=${'#/sequences/' + s.id}>${s.name}</a></td><td>${describeTrigger(s.trigger, lists)}</td>
        <td><span class=${'tag ' + s.status} data-status=${s.status}>${s.status}</span></td><td>${s.steps.length}</td><td><${Counts} stats=${counts.get(s.id)} /></td></tr>`)}</tbody>
    </table></div>`}
    <${Pager} paged=${paged} label="Sequences" />`;
}

export function SequenceNew() {
  return html`<p><a href="#/sequences">← Sequences</a></p>
    <${PageHeader} title="New sequence" />
    <p>It is saved as a draft: nothing is sent until it is activated.</p>
    <${SequenceForm} onSaved=${(/** @type {any} */ s) => go('#/sequences/' + s.id)} />`;
}

/** @type {Record<string, Array<[string,string]>>} */
const actions = {
  draft: [['activate', 'Activate'], ['archive', 'Archive'], ['delete', 'Delete draft']],
  active: [['pause', 'Pause'], ['archive', 'Archive']],
  paused: [['resume', 'Resume'], ['archive', 'Archive']],
  archived: [],
};

/** @type {Record<string,string>} */
const allowedFrom = {
  activate: 'Only a draft can be activated',
  pause: 'Only an active sequence can be paused',
  resume: 'Only a paused sequence can be resumed',
  archive: 'It is already archived',
  delete: 'Only a draft can be deleted (a sequence that was ever active is archived instead)',
  enroll: 'Subscribers can be enrolled only while the sequence is active or paused',
  save: 'An archived sequence cannot be changed',
};

/**
 * A state change the API refused with 409, in words: what the action needs and
 * what the sequence is now.
 * @param {string} action @param {any} err
 */
export function conflict(action, err) {
  if (!(err instanceof Problem) || err.status !== 409) return explain(err);
  const now = err.body.current_status;
  return `${allowedFrom[action] || err.message}${now ? `; this sequence is ${now} now (someone or something changed it meanwhile, or it was never in that state)` : ''}. The page shows its current state.`;
}

/** @param {{seq:any, onDone:()=>void}} p */
function Enroll({ seq, onDone }) {
  const [email, setEmail] = useState('');
  const [note, setNote] = useState('');
  const [error, setError] = useState(/** @type {any} */ (null));
  const submit = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    setNote('');
    try {
      const r = await api('POST', `/v1/sequences/${seq.id}/enroll`, { email: email.trim() });
      setNote(r.enrolled ? `${email.trim()} is enrolled.` : `${email.trim()} was already enrolled: nothing changed (a subscriber goes through a sequence once).`);
      setEmail('');
      onDone();
    } catch (err) { setError(err); }
  };
  return html`<section aria-labelledby="enroll"><h2 id="enroll">Enroll a subscriber</h2>
    <form onSubmit=${submit} class="inline" aria-label="Enroll a subscriber">
      <${Field} label="Subscriber address" type="email" value=${email} onInput=${setEmail} required
        error=${fieldError(error, '/email') || fieldError(error, '/subscriber_id')} />
      <button type="submit">Enroll</button>
    </form>
    <p role="status">${note}</p>
    ${error && !fieldError(error, '/email') && html`<div class="error" role="alert"><p>${conflict('enroll', error)}</p></div>`}
  </section>`;
}

/**
 * Posts one event as the application would (POST /v1/track), to try an event
 * trigger or a wait for an event without writing code.
 * @param {{names:string[], onDone:()=>void}} p
 */
function TrackEvent({ names, onDone }) {
  const [name, setName] = useState(names[0]);
  const [email, setEmail] = useState('');
  const [res, setRes] = useState(/** @type {any} */ (null));
  const [error, setError] = useState(/** @type {any} */ (null));
  const submit = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    setRes(null);
    try {
      // A fresh event id: each click is a new event (the API ignores a replayed id).
      const id = 'dashboard-' + Date.now().toString(36) + '-' + Math.random().toString(36).slice(2, 8);
      setRes(await api('POST', '/v1/track', { event_id: id, name, email: email.trim() }));
      onDone();
    } catch (err) { setError(err); }
  };
  return html`<section aria-labelledby="track"><h2 id="track">Track an event</h2>
    <p>What your application does with <code>POST /v1/track</code>: it enrolls the subscriber in active sequences triggered by the event, and wakes enrollments waiting for it.</p>
    <form onSubmit=${submit} class="inline" aria-label="Track an event">
      <${Field} label="Event" value=${name} onInput=${setName} required error=${fieldError(error, '/name')} />
      <${Field} label="Subscriber's address" type="email" value=${email} onInput=${setEmail} required error=${fieldError(error, '/email')} />
      <button type="submit">Track event</button>
    </form>
    <${ErrorBox} error=${error} />
    <p role="status">${res && `Enrolled in ${res.enrolled} sequence${res.enrolled === 1 ? '' : 's'}; woke ${res.woke} waiting enrollment${res.woke === 1 ? '' : 's'}.`}</p>
  </section>`;
}

/** @param {{id:number}} p */
export function SequencePage({ id }) {
  const [seq, error, reload] = useLoad(() => api('GET', '/v1/sequences/' + id), [id]);
  const names = useNames();
  const lists = names.lists;
  const [actionError, setActionError] = useState(/** @type {{action:string, err:any}|null} */ (null));
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState('');
  // The editor (and the four lists it loads) only once its section is opened.
  const [editing, setEditing] = useState(false);
  // Stats and timelines are asked again when the stream reports a step of this
  // sequence sent or an enrollment exiting (at most about once a second).
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let pending = /** @type {any} */ (null);
    const off = subscribe((ev) => {
      if (ev.data && ev.data.sequence_id === id && !pending) pending = setTimeout(() => { pending = null; setTick((t) => t + 1); }, 500);
    });
    // What happened between the first load and the stream's opening is in neither.
    const offOpen = onStreamOpen(() => setTick((t) => t + 1));
    return () => { off(); offOpen(); if (pending) clearTimeout(pending); };
  }, [id]);
  if (error) return html`<${PageHeader} title=${`Sequence ${id}`} /><${ErrorBox} error=${error} /><p><a href="#/sequences">All sequences</a></p>`;
  if (!seq) return html`<p class="loading">Loading…</p>`;
  const act = async (/** @type {string} */ a) => {
    if (a === 'archive' && !confirm('Archive this sequence? Every running enrollment exits and queued sends are cancelled.')) return;
    if (a === 'delete' && !confirm('Delete this draft?')) return;
    setBusy(true);
    setActionError(null);
    setNote('');
    try {
      if (a === 'delete') { await api('DELETE', '/v1/sequences/' + id); go('#/sequences'); return; }
      const s = await api('POST', `/v1/sequences/${id}/${a}`);
      setNote(`The sequence is ${s.status}.`);
    } catch (err) { setActionError({ action: a, err }); }
    setBusy(false);
    reload();
  };
  const events = [...new Set([seq.trigger.type === 'event' ? seq.trigger.event : '',
    ...seq.steps.filter((/** @type {any} */ s) => s.type === 'wait_for_event').map((/** @type {any} */ s) => s.event)].filter(Boolean))];
  return html`<p><a href="#/sequences">← Sequences</a></p>
    <${PageHeader} title=${seq.name}><div class="actions" role="group" aria-labelledby="seq-status">
      ${actions[seq.status].filter(([a]) => can(a === 'delete' ? 'sequences:write' : 'sequences:activate')).map(([a, label], i) => html`<button type="button" key=${a} disabled=${busy} onClick=${() => act(a)}
        class=${a === 'archive' || a === 'delete' ? 'danger' : i === 0 && !editing ? 'primary' : ''}>${label}</button>`)}
    </div></${PageHeader}>
    <p id="seq-status">Status: <span class=${'tag ' + seq.status} data-status=${seq.status}>${seq.status}</span>
      · trigger: ${describeTrigger(seq.trigger, lists)} · time zone ${seq.time_zone}${seq.late_after ? ` · a send more than ${seq.late_after} late is skipped` : ''}
      ${seq.activated_at && html` · activated ${when(seq.activated_at)}`}</p>
    ${seq.status === 'draft' && html`<p>A draft enrolls nobody and sends nothing: activate it to start.</p>`}
    <p role="status">${note}</p>
    ${actionError && html`<div class="error" role="alert" data-conflict=${actionError.err instanceof Problem && actionError.err.status === 409 ? 'yes' : 'no'}><p>${conflict(actionError.action, actionError.err)}</p></div>`}
    <${SequenceStats} seq=${seq} tick=${tick} names=${names} />
    ${(seq.status === 'active' || seq.status === 'paused') && can('sequences:activate') && html`<${Enroll} seq=${seq} onDone=${() => setTick((t) => t + 1)} />`}
    ${(seq.status === 'active' || seq.status === 'paused') && events.length > 0 && can('tracking:write') && html`<${TrackEvent} names=${events} onDone=${() => setTick((t) => t + 1)} />`}
    <${Enrollments} seq=${seq} tick=${tick} names=${names} />
    ${seq.status !== 'archived' && can('sequences:write') && html`<section aria-labelledby="edit"><h2 id="edit">Definition</h2>
      <details onToggle=${(/** @type {any} */ e) => setEditing(e.currentTarget.open)}><summary>Edit the trigger and steps</summary>
        ${seq.status !== 'draft' && html`<p>Changes apply to every enrollment at a step it has not reached yet; a step already passed is never sent again.</p>`}
        ${editing && html`<${SequenceForm} key=${seq.updated_at} sequence=${seq} onSaved=${() => { setNote('Saved.'); reload(); }} />`}
      </details></section>`}`;
}
