import { html, useState, useEffect, useRef } from './preact-htm.js';
import { api, subscribe, onStreamOpen } from './api.js';
import { Field, Select, ErrorBox, Empty, fieldError, useLoad, when, num, go, explain, useId } from './ui.js';
import { CampaignProgress } from './progress.js';
import { CampaignChart } from './chart.js';
import { Engagement } from './engagement.js';

const statuses = ['', 'draft', 'approved', 'building', 'sending', 'paused', 'sent', 'cancelled', 'failed'];

export function Campaigns() {
  const [status, setStatus] = useState('');
  const [page, error] = useLoad(() => api('GET', '/v1/campaigns?limit=200' + (status ? '&status=' + status : '')), [status]);
  return html`<h1>Campaigns</h1>
    <p><a class="button" href="#/campaigns/new">New campaign</a></p>
    <${Select} label="Status" value=${status} onChange=${setStatus} options=${statuses.map((s) => [s, s || 'any'])} />
    <${ErrorBox} error=${error} />
    ${page && page.data.length === 0 && html`<${Empty} title="No campaigns${status ? ' with this status' : ''}.">
      <p><a href="#/campaigns/new">Create one</a> from a template or from scratch.</p></${Empty}>`}
    ${page && page.data.length > 0 && html`<div class="table-wrap"><table>
      <caption class="sr-only">Campaigns</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
      <tbody>${[...page.data].reverse().map((/** @type {any} */ c) => html`<tr key=${c.id}>
        <td><a href=${'#/campaigns/' + c.id}>${c.name}</a></td><td><span class=${'tag ' + c.status}>${c.status}</span></td><td>${when(c.created_at)}</td></tr>`)}
      </tbody></table></div>`}`;
}

/**
 * The audience count of lists and a segment, through the segment preview.
 * @param {number[]} listIds @param {number} segmentId @param {any[]} segments
 */
async function audience(listIds, segmentId, segments) {
  const seg = segments.find((s) => s.id === segmentId);
  /** @type {any} */
  const filter = { statuses: ['confirmed'] };
  if (seg) {
    if (seg.match) filter.match = seg.match;
    if (seg.statuses.length) filter.statuses = seg.statuses;
    if (seg.list_ids.length) filter.list_ids = seg.list_ids;
  }
  if (listIds.length) filter.list_ids = listIds;
  return (await api('POST', '/v1/segments/preview', filter)).count;
}

export function CampaignNew() {
  const [templates] = useLoad(() => api('GET', '/v1/templates?limit=200'));
  const [lists] = useLoad(() => api('GET', '/v1/lists?limit=200'));
  const [segments] = useLoad(() => api('GET', '/v1/segments?limit=200'));
  const [f, setF] = useState({ name: '', from_email: '', from_name: '', template_id: '', subject: '', html_template: '', text_template: '', segment_id: '' });
  const [listIds, setListIds] = useState(/** @type {number[]} */ ([]));
  const [count, setCount] = useState(/** @type {number|null} */ (null));
  const [error, setError] = useState(/** @type {any} */ (null));
  const set = (/** @type {string} */ k) => (/** @type {string} */ v) => setF({ ...f, [k]: v });
  useEffect(() => {
    if (!segments) return;
    let live = true;
    audience(listIds, Number(f.segment_id), segments.data).then((n) => live && setCount(n), () => live && setCount(null));
    return () => { live = false; };
  }, [listIds.join(','), f.segment_id, segments]);
  const submit = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    /** @type {any} */
    const body = { name: f.name, from_email: f.from_email, list_ids: listIds };
    if (f.from_name) body.from_name = f.from_name;
    if (f.segment_id) body.segment_id = Number(f.segment_id);
    if (f.template_id) body.template_id = Number(f.template_id);
    else {
      body.subject = f.subject;
      if (f.html_template) body.html_template = f.html_template;
      if (f.text_template) body.text_template = f.text_template;
    }
    try {
      const c = await api('POST', '/v1/campaigns', body);
      go('#/campaigns/' + c.id);
    } catch (err) { setError(err); }
  };
  const fromTemplate = !!f.template_id;
  return html`<h1>New campaign</h1>
    <form onSubmit=${submit} class="form">
      <${Field} label="Name" value=${f.name} onInput=${set('name')} required error=${fieldError(error, '/name')} />
      <${Field} label="From address" type="email" value=${f.from_email} onInput=${set('from_email')} required error=${fieldError(error, '/from_email')} />
      <${Field} label="From name" value=${f.from_name} onInput=${set('from_name')} error=${fieldError(error, '/from_name')} />
      <${Select} label="Template" value=${f.template_id} onChange=${set('template_id')} error=${fieldError(error, '/template_id')}
        options=${[['', 'None: write the message here'], ...(templates ? templates.data.map((/** @type {any} */ t) => [String(t.id), t.name]) : [])]} />
      ${!fromTemplate && html`
        <${Field} label="Subject" value=${f.subject} onInput=${set('subject')} error=${fieldError(error, '/subject')} hint="A template: {{.Name}}, {{.Email}}, {{.Attributes.x}}" />
        <${Field} label="HTML" textarea value=${f.html_template} onInput=${set('html_template')} error=${fieldError(error, '/html_template')} />
        <${Field} label="Text" textarea value=${f.text_template} onInput=${set('text_template')} error=${fieldError(error, '/text_template')} />`}
      <fieldset>
        <legend>Lists</legend>
        ${lists && lists.data.length === 0 && html`<p>No lists yet: the audience is the segment, or every confirmed subscriber.</p>`}
        ${lists && lists.data.map((/** @type {any} */ l) => html`<label class="check" key=${l.id}><input type="checkbox" checked=${listIds.includes(l.id)}
          onChange=${(/** @type {any} */ e) => setListIds(e.currentTarget.checked ? [...listIds, l.id] : listIds.filter((x) => x !== l.id))} /> ${l.name} (${num(l.member_count)})</label>`)}
        ${fieldError(error, '/list_ids') && html`<p class="field-error">${fieldError(error, '/list_ids')}</p>`}
      </fieldset>
      <${Select} label="Segment" value=${f.segment_id} onChange=${set('segment_id')} error=${fieldError(error, '/segment_id')}
        options=${[['', 'None'], ...(segments ? segments.data.map((/** @type {any} */ s) => [String(s.id), s.name]) : [])]} />
      <p class="audience" role="status" aria-live="polite">Audience: <strong data-audience=${count ?? ''}>${count === null ? '…' : num(count)}</strong> subscribers</p>
      <${ErrorBox} error=${error} />
      <button type="submit">Create draft</button>
    </form>`;
}

/** @param {{campaign:any}} p */
function Preview({ campaign }) {
  const [email, setEmail] = useState('');
  const [out, setOut] = useState(/** @type {any} */ (null));
  const [error, setError] = useState(/** @type {any} */ (null));
  if (!campaign.template_id) {
    return html`<section aria-labelledby="preview"><h2 id="preview">Message</h2>
      <p>Subject: <code>${campaign.subject}</code></p>
      <pre class="source">${campaign.text_template || campaign.html_template}</pre></section>`;
  }
  const show = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    try {
      /** @type {any} */
      const body = {};
      if (email) {
        const found = await api('GET', '/v1/subscribers?limit=1&email=' + encodeURIComponent(email.toLowerCase()));
        const s = found.data[0];
        if (!s || s.email.toLowerCase() !== email.toLowerCase()) throw new Error(`no subscriber ${email}`);
        Object.assign(body, { email: s.email, name: s.name, data: s.attributes });
      }
      setOut(await api('POST', `/v1/templates/${campaign.template_id}/render`, body));
    } catch (err) { setError(err); }
  };
  return html`<section aria-labelledby="preview"><h2 id="preview">Preview</h2>
    <form onSubmit=${show} class="inline">
      <${Field} label="As subscriber (address; empty: the template's sample)" type="email" value=${email} onInput=${setEmail} />
      <button type="submit">Preview</button>
    </form>
    <${ErrorBox} error=${error} />
    ${out && html`<div class="preview" data-preview="ready">
      <p>Subject: <strong>${out.subject}</strong></p>
      ${out.html && html`<iframe title="HTML preview" sandbox="" srcdoc=${out.html}></iframe>`}
      <pre class="source">${out.text}</pre></div>`}
  </section>`;
}

/** @param {{id:number}} p */
function TestSend({ id }) {
  const [to, setTo] = useState('');
  const [res, setRes] = useState(/** @type {any} */ (null));
  const [error, setError] = useState(/** @type {any} */ (null));
  const send = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    try { setRes(await api('POST', `/v1/campaigns/${id}/test`, { emails: to.split(',').map((s) => s.trim()).filter(Boolean) })); } catch (err) { setError(err); }
  };
  return html`<section aria-labelledby="test"><h2 id="test">Test send</h2>
    <form onSubmit=${send} class="inline">
      <${Field} label="To (up to 10, comma separated)" value=${to} onInput=${setTo} required error=${fieldError(error, '/emails') || fieldError(error, '/emails/0')} />
      <button type="submit">Send test</button>
    </form>
    <${ErrorBox} error=${error} />
    <div role="status">${res && html`<ul class="plain">${res.results.map((/** @type {any} */ r) => html`<li key=${r.email}>${r.email}: ${r.sent ? 'sent' : 'not sent: ' + r.error}</li>`)}</ul>`}</div>
  </section>`;
}

/** @param {{id:number}} p */
function Sends({ id }) {
  const [status, setStatus] = useState('');
  const [q, setQ] = useState('');
  const [rows, setRows] = useState(/** @type {any[]|null} */ (null));
  const [note, setNote] = useState('');
  const [error, setError] = useState(/** @type {any} */ (null));
  const latest = useRef(0);
  const search = async (/** @type {Event|null} */ e) => {
    e && e.preventDefault();
    const mine = ++latest.current; // a slower, older search must not overwrite this one
    setError(null);
    setNote('Searching…');
    try {
      // The API finds one address (exact, any case) however large the campaign.
      const addr = q.trim();
      const p = await api('GET', `/v1/campaigns/${id}/sends?limit=100` + (status ? '&status=' + status : '') + (addr ? '&email=' + encodeURIComponent(addr) : ''));
      if (mine !== latest.current) return;
      setRows(p.data);
      setNote(addr ? (p.data.length ? `Found ${addr}.` : `No send to ${addr}${status ? ' with status ' + status : ''}.`)
        : `${num(p.data.length)} sends shown${p.next_cursor ? ' (the first 100)' : ''}.`);
    } catch (err) { if (mine === latest.current) { setError(err); setNote(''); } }
  };
  useEffect(() => { search(null); }, [id, status]);
  return html`<section aria-labelledby="sends"><h2 id="sends">Sends</h2>
    <form onSubmit=${search} class="inline">
      <${Field} label="Address" type="search" value=${q} onInput=${setQ} hint="The whole address, any case" error=${fieldError(error, '/email')} />
      <${Select} label="Status" value=${status} onChange=${setStatus}
        options=${['', 'queued', 'sending', 'sent', 'failed', 'suppressed', 'cancelled', 'unknown'].map((s) => [s, s || 'any'])} />
      <button type="submit">Search</button>
    </form>
    <p role="status">${note}</p>
    <${ErrorBox} error=${error} />
    ${rows && rows.length > 0 && html`<div class="table-wrap"><table class="sends">
      <caption class="sr-only">Sends</caption>
      <thead><tr><th scope="col">Address</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Sent</th><th scope="col">Last error</th></tr></thead>
      <tbody>${rows.map((s) => html`<tr key=${s.id}><td>${s.email}</td><td><span class=${'tag ' + s.status}>${s.status}</span></td><td>${s.attempts}</td><td>${when(s.sent_at)}</td><td>${s.last_error || ''}</td></tr>`)}</tbody>
    </table></div>`}
  </section>`;
}

/** @type {Record<string, Array<[string,string]>>} */
const actions = {
  draft: [['approve', 'Approve and send now']],
  approved: [['unapprove', 'Back to draft'], ['cancel', 'Cancel']],
  sending: [['pause', 'Pause'], ['cancel', 'Cancel']],
  paused: [['resume', 'Resume'], ['cancel', 'Cancel']],
};

/**
 * The campaign's events, newest first: its lifecycle so far (GET
 * /v1/campaigns/{id}/events), then every event of it the stream delivers while the
 * page is open, its sends' outcomes included.
 * @param {{id:number}} p
 */
function CampaignEvents({ id }) {
  const [past, pastError, reloadPast] = useLoad(() => api('GET', `/v1/campaigns/${id}/events`), [id]);
  // A stream that opens after the page loaded starts at that moment: what happened
  // in between (a pause pressed right away) is in neither, so read the history again.
  useEffect(() => onStreamOpen(reloadPast), [id]);
  // Live: every lifecycle event, and the last 10 of its sends' outcomes.
  const [events, setEvents] = useState(/** @type {any[]} */ ([]));
  useEffect(() => subscribe((ev) => {
    if (!ev.data || ev.data.campaign_id !== id) return;
    setEvents((list) => {
      if (list.some((e) => e.id === ev.id)) return list;
      let sends = 0;
      return [ev, ...list].filter((e) => !String(e.type).startsWith('send.') || ++sends <= 10);
    });
  }), [id]);
  const seen = new Set(events.map((e) => e.id));
  const all = [...events, ...(past ? past.data.filter((/** @type {any} */ e) => !seen.has(e.id)) : [])];
  return html`<section aria-labelledby="events"><h2 id="events">Events</h2>
    <${ErrorBox} error=${pastError} />
    ${past && all.length === 0 && html`<p>None yet: the campaign's events (approved, started, paused, sent…) appear here, and its sends' outcomes while the page is open.</p>`}
    ${all.length > 0 && html`<ul class="plain" data-events=${all.length}>
      ${all.map((e) => html`<li key=${e.id} data-event=${e.id}><span class="tag">${e.type}</span> ${e.data.email || ''} <small>${when(e.timestamp)}</small></li>`)}</ul>`}
  </section>`;
}

/** @param {{id:number, onDone:()=>void}} p */
function Schedule({ id, onDone }) {
  const [at, setAt] = useState('');
  const [error, setError] = useState(/** @type {any} */ (null));
  const submit = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    try { await api('POST', `/v1/campaigns/${id}/approve`, { scheduled_for: new Date(at).toISOString() }); onDone(); } catch (err) { setError(err); }
  };
  return html`<form onSubmit=${submit} class="inline">
    <${Field} label="Send at (your local time)" type="datetime-local" value=${at} onInput=${setAt} required error=${fieldError(error, '/scheduled_for')} />
    <button type="submit">Schedule</button>
    <${ErrorBox} error=${error} />
  </form>`;
}

/** @param {{id:number}} p */
export function CampaignPage({ id }) {
  const [c, error, reload] = useLoad(() => api('GET', '/v1/campaigns/' + id), [id]);
  const [actionError, setActionError] = useState(/** @type {any} */ (null));
  const [busy, setBusy] = useState(false);
  const statusId = useId('status');
  if (error) return html`<h1>Campaign</h1><${ErrorBox} error=${error} />`;
  if (!c) return html`<p>Loading…</p>`;
  const act = async (/** @type {string} */ a) => {
    if (a === 'cancel' && !confirm('Cancel this campaign? Recipients not yet sent to will not be.')) return;
    setBusy(true);
    setActionError(null);
    try { await api('POST', `/v1/campaigns/${id}/${a}`, a === 'approve' ? {} : undefined); } catch (err) { setActionError(err); }
    setBusy(false);
    reload();
  };
  return html`<p><a href="#/campaigns">← Campaigns</a></p>
    <h1>${c.name}</h1>
    <p id=${statusId}>Status: <span class=${'tag ' + c.status} data-status=${c.status}>${c.status}</span>
      ${c.paused_reason && html` (${c.paused_reason})`} · created ${when(c.created_at)}</p>
    <div class="actions" role="group" aria-labelledby=${statusId}>
      ${(actions[c.status] || []).map(([a, label]) => html`<button type="button" key=${a} disabled=${busy} onClick=${() => act(a)} class=${a === 'cancel' ? 'danger' : ''}>${label}</button>`)}
    </div>
    ${c.status === 'draft' && html`<${Schedule} id=${id} onDone=${reload} />`}
    ${c.scheduled_for && c.status === 'approved' && html`<p>Scheduled for ${when(c.scheduled_for)}.</p>`}
    ${actionError && html`<div class="error" role="alert"><p>${explain(actionError)}</p></div>`}
    ${c.status !== 'draft' && html`<${CampaignProgress} id=${id} onStatus=${(/** @type {string} */ s) => s !== c.status && reload()} />`}
    ${c.status === 'draft' && html`<${Preview} campaign=${c} /><${TestSend} id=${id} />`}
    ${c.status !== 'draft' && html`<${CampaignChart} id=${id} />`}
    ${c.status !== 'draft' && html`<${Engagement} campaign=${c} />`}
    ${c.status !== 'draft' && html`<${Sends} id=${id} />`}
    <${CampaignEvents} id=${id} />`;
}
