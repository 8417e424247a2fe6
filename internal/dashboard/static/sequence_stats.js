// What a sequence did: per-step stats (GET /v1/sequences/{id}/stats) and the
// enrollments with their timelines (GET /v1/sequences/{id}/enrollments), searched
// by one subscriber's address.
import { html, useState } from './preact-htm.js';
import { api } from './api.js';
import { Field, ErrorBox, useLoad, when, num } from './ui.js';

/**
 * The names of the account's templates, lists and segments by id (the first 200
 * of each), for words about steps.
 * @typedef {{templates:Map<number,string>, lists:Map<number,string>, segments:Map<number,string>}} Names
 */

/** @returns {Names} */
export function useNames() {
  const [t] = useLoad(() => api('GET', '/v1/templates?limit=200'));
  const [l] = useLoad(() => api('GET', '/v1/lists?limit=200'));
  const [g] = useLoad(() => api('GET', '/v1/segments?limit=200'));
  const map = (/** @type {any} */ p) => new Map(p ? p.data.map((/** @type {any} */ x) => [x.id, x.name]) : []);
  return { templates: map(t), lists: map(l), segments: map(g) };
}

/** @param {Map<number,string>|undefined} m @param {number} id @param {string} kind */
function named(m, id, kind) {
  const n = m && m.get(id);
  return n ? `"${n}"` : `${kind} ${id}`;
}

/** Words for a step. @param {any} s @param {Names} [names] */
export function describeStep(s, names) {
  if (!s) return '';
  switch (s.type) {
    case 'send': return `send ${named(names && names.templates, s.template_id, 'template')} from ${s.from_email}`;
    case 'wait': return 'wait ' + [s.duration, s.at && `until ${s.at}`, s.weekdays && s.weekdays.length && `on ${s.weekdays.join(', ')}`].filter(Boolean).join(' ');
    case 'condition': {
      const c = s.if || {};
      return 'exit if ' + (c.in_segment ? `in segment ${named(names && names.segments, c.in_segment, 'segment')}`
        : c.left_list ? `not in list ${named(names && names.lists, c.left_list, 'list')}`
          : c.clicked ? `a link of step ${c.clicked.step + 1} was clicked` : `data ${c.data}`);
    }
    case 'wait_for_event': return `wait for ${s.event} at most ${s.timeout}`;
    default: return s.type;
  }
}

/**
 * The outcomes of one kind (skipped or exited): the count and its reasons.
 * @param {Record<string,number>} outcomes @param {string} kind
 */
function byReason(outcomes, kind) {
  let total = 0;
  /** @type {string[]} */
  const reasons = [];
  for (const [k, n] of Object.entries(outcomes)) {
    if (k !== kind && !k.startsWith(kind + ':')) continue;
    total += n;
    if (k.includes(':')) reasons.push(`${k.slice(kind.length + 1).replace(/_/g, ' ')} ${num(n)}`);
  }
  return { total, reasons };
}

/** @param {{n:{total:number, reasons:string[]}, kind:string}} p */
function Reasons({ n, kind }) {
  return html`<span data-kind=${kind} data-count=${n.total}>${num(n.total)}</span>${n.reasons.length > 0 && html`<br /><small>${n.reasons.join(', ')}</small>`}`;
}

/** Words for the reasons of a waiting step (the stats key them by their first word). */
const waitingFor = /** @type {Record<string,string>} */ ({ until: 'for the time', event: 'for the event' });

/**
 * An outcome's key (outcome or outcome:reason) and count in words. The times
 * each enrollment waits until are on its timeline, not here.
 * @param {string} k @param {number} n
 */
function outcome(k, n) {
  const i = k.indexOf(':');
  if (i < 0) return `${k.replace(/_/g, ' ')} ${num(n)}`;
  const reason = k.slice(i + 1);
  const shown = (k.startsWith('waiting:') && waitingFor[reason]) || reason.replace(/_/g, ' ');
  return `${k.slice(0, i).replace(/_/g, ' ')} (${shown}) ${num(n)}`;
}

/** @param {{seq:any, tick:number, names:Names}} p */
export function SequenceStats({ seq, tick, names }) {
  const [stats, error, reload] = useLoad(() => api('GET', `/v1/sequences/${seq.id}/stats`), [seq.id, tick]);
  const e = (stats && stats.enrollments) || {};
  return html`<section aria-labelledby="stats"><h2 id="stats">Steps</h2>
    <p>Enrollments: <strong data-active=${e.active || 0}>${num(e.active)}</strong> active, <strong>${num(e.completed)}</strong> completed, <strong>${num(e.exited)}</strong> exited.${' '}
      <button type="button" class="link" data-reads onClick=${reload}>Refresh</button></p>
    <${ErrorBox} error=${error} />
    ${stats && html`<div class="table-wrap"><table class="sequence-stats">
      <caption class="sr-only">Per-step stats</caption>
      <thead><tr><th scope="col">Step</th><th scope="col">Entered</th><th scope="col">Sent</th><th scope="col">Skipped</th><th scope="col">Exited</th><th scope="col">Other</th><th scope="col">Sends now</th></tr></thead>
      <tbody>${seq.steps.map((/** @type {any} */ st, /** @type {number} */ i) => {
        const s = stats.steps.find((/** @type {any} */ x) => x.step === i) || { outcomes: {}, sends: {} };
        const o = s.outcomes || {};
        const other = Object.entries(o).filter(([k]) => !/^(entered|sent|skipped|exited)(:|$)/.test(k));
        return html`<tr key=${i} data-step=${i}>
          <th scope="row">${i + 1}. ${describeStep(st, names)}</th>
          <td data-kind="entered" data-count=${o.entered || 0}>${num(o.entered)}</td>
          <td><${Reasons} n=${byReason(o, 'sent')} kind="sent" /></td>
          <td><${Reasons} n=${byReason(o, 'skipped')} kind="skipped" /></td>
          <td><${Reasons} n=${byReason(o, 'exited')} kind="exited" /></td>
          <td>${other.map(([k, n]) => outcome(k, n)).join(', ')}</td>
          <td>${Object.entries(s.sends || {}).map(([k, n]) => `${k} ${num(n)}`).join(', ')}</td></tr>`;
      })}</tbody>
    </table></div>`}
  </section>`;
}

/** @param {{seq:any, tick:number, names:Names}} p */
export function Enrollments({ seq, tick, names }) {
  const [q, setQ] = useState('');
  const [email, setEmail] = useState('');
  const [page, error] = useLoad(() => api('GET', `/v1/sequences/${seq.id}/enrollments?limit=20` + (email ? '&email=' + encodeURIComponent(email) : '')), [seq.id, email, tick]);
  const submit = (/** @type {Event} */ e) => { e.preventDefault(); setEmail(q.trim()); };
  return html`<section aria-labelledby="enrollments"><h2 id="enrollments">Enrollments</h2>
    <form onSubmit=${submit} class="inline" aria-label="Find an enrollment" data-reads>
      <${Field} label="Find by address" type="search" value=${q} onInput=${setQ} hint="The whole address, any case; empty: the latest 20." error=${(error && error.fields && error.fields['/email']) || undefined} />
      <button type="submit">Find</button>
    </form>
    <${ErrorBox} error=${error} />
    <p role="status">${page && (email ? (page.data.length ? `${email}: its timeline below.` : `${email} is not enrolled.`)
      : page.data.length ? `${num(page.data.length)} enrollments shown${page.next_cursor ? ' (the latest 20)' : ''}.` : 'Nobody is enrolled yet.')}</p>
    ${page && page.data.map((/** @type {any} */ en) => html`<details class="enrollment card" key=${en.id} open=${!!email} data-enrollment=${en.id}>
      <summary><strong>${en.email}</strong> · <span class=${'tag ' + en.state}>${en.state}</span>
        ${en.state === 'active' && ` · next: step ${en.step + 1}, due ${when(en.due_at)}${en.waiting_for ? `, waiting for ${en.waiting_for}` : ''}`}
        ${en.exit_reason && ` · exit: ${en.exit_reason.replace(/_/g, ' ')}`}</summary>
      <ol class="timeline" aria-label=${'Timeline of ' + en.email}>
        ${en.timeline.map((/** @type {any} */ t, /** @type {number} */ k) => html`<li key=${k} data-outcome=${t.outcome}>
          <span class="tag">${t.outcome}</span> step ${t.step + 1}${seq.steps[t.step] ? ` (${describeStep(seq.steps[t.step], names)})` : ''}
          ${t.reason && html` · ${t.reason.replace(/_/g, ' ')}`}${t.send_status && html` · send ${t.send_status}`} <small>${when(t.at)}</small></li>`)}
      </ol>
    </details>`)}
  </section>`;
}
