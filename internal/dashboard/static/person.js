// A subscriber's history and data rights (docs/reports.md, A person's data and
// erasure): the activity, newest first, a page at a time
// (GET /v1/subscribers/{id}/activity, "Load more"); the data export
// (GET /v1/subscribers/{id}/export, downloaded with the session); and the erasure
// (POST /v1/subscribers/{id}/erase) behind a confirmation that says it cannot be
// undone. Each control is shown only to a session holding its permission.
import { html, useState, useRef, useEffect } from './preact-htm.js';
import { api } from './api.js';
import { ErrorBox, when, go, toast } from './ui.js';
import { can } from './perm.js';

/** What one activity item says, in words. @param {any} a */
function describe(a) {
  const d = a.data || {};
  switch (a.kind) {
    case 'send': {
      const what = d.campaign_kind === 'sequence' ? 'Sequence step' : 'Campaign';
      return html`${what} <a href=${'#/campaigns/' + d.campaign_id}>${d.campaign_name || '#' + d.campaign_id}</a>:
        <span class="tag" data-status=${d.status}>${d.status}</span>${d.feedback ? html` <span class="tag failed">${d.feedback}</span>` : ''}${d.error ? html` <small>${d.error}</small>` : ''}`;
    }
    case 'message':
      return html`Message <a href=${'#/messages/' + d.message_id}>${d.subject || '#' + d.message_id}</a>:
        <span class="tag" data-status=${d.status}>${d.status}</span>${d.feedback ? html` <span class="tag failed">${d.feedback}</span>` : ''}`;
    case 'open':
    case 'click': {
      const of = d.campaign_id ? html`campaign <a href=${'#/campaigns/' + d.campaign_id}>#${d.campaign_id}</a>` : html`message <a href=${'#/messages/' + d.message_id}>#${d.message_id}</a>`;
      return html`${a.kind === 'open' ? 'Opened' : 'Clicked'} ${of}${d.url ? html`: <code class="url">${d.url}</code>` : ''}${d.suspected_bot ? html` <span class="tag" title="Suspected scanner, not counted as a person">suspected scanner</span>` : ''}`;
    }
    case 'sequence_step':
      return html`Sequence <a href=${'#/sequences/' + d.sequence_id}>${d.sequence_name || '#' + d.sequence_id}</a>, step ${d.step}: ${d.outcome}${d.reason ? ` (${d.reason})` : ''}`;
    case 'suppression':
      return html`Suppressed: ${d.reason}${d.source ? `, by ${d.source}` : ''}`;
    default: {
      const parts = Object.entries(d).filter(([, v]) => v !== null && v !== '' && !(Array.isArray(v) && v.length === 0))
        .map(([k, v]) => `${k.replace(/_/g, ' ')}: ${Array.isArray(v) ? v.join(', ') : typeof v === 'object' ? JSON.stringify(v) : v}`);
      return html`${parts.join('; ') || '—'}`;
    }
  }
}

/** @param {{id:number}} p */
export function Activity({ id }) {
  const [items, setItems] = useState(/** @type {any[]} */ ([]));
  const [next, setNext] = useState(/** @type {string|null} */ (null));
  const [loaded, setLoaded] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(/** @type {any} */ (null));
  const [note, setNote] = useState('');
  const table = useRef(/** @type {HTMLTableElement|null} */ (null));
  /** @param {string} cursor @param {any[]} before */
  const load = async (cursor, before) => {
    setBusy(true);
    setError(null);
    try {
      const p = await api('GET', `/v1/subscribers/${id}/activity?limit=50` + (cursor ? '&cursor=' + encodeURIComponent(cursor) : ''));
      setItems([...before, ...p.data]);
      setNext(p.next_cursor || null);
      if (cursor) setNote(`${p.data.length} more item${p.data.length === 1 ? '' : 's'} loaded${p.next_cursor ? '' : '; that is all'}.`);
    } catch (err) { setError(err); }
    setBusy(false);
    setLoaded(true);
  };
  useEffect(() => { setItems([]); setNext(null); setLoaded(false); if (can('audience:read')) load('', []); }, [id]);
  if (!can('audience:read')) return null;
  return html`<section aria-labelledby="activity"><h2 id="activity">Activity</h2>
    <p>What happened to this person, newest first: campaigns and sequence steps sent and their outcome, messages to the address, opens and clicks (a suspected scanner said so), opt-ins, opt-outs and suppressions.</p>
    <${ErrorBox} error=${error} />
    ${!loaded && html`<p class="loading">Loading the activity…</p>`}
    ${loaded && items.length === 0 && !error && html`<p data-activity="none">Nothing yet.</p>`}
    ${items.length > 0 && html`<div class="table-wrap"><table class="activity" ref=${table} data-items=${items.length}>
      <caption class="sr-only">Activity, newest first</caption>
      <thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Details</th></tr></thead>
      <tbody>${items.map((a) => html`<tr key=${a.kind + ':' + a.id + ':' + a.at} data-kind=${a.kind}><td>${when(a.at)}</td><td>${a.kind.replace(/_/g, ' ')}</td><td>${describe(a)}</td></tr>`)}</tbody>
    </table></div>`}
    ${next && html`<p><button type="button" data-reads disabled=${busy} onClick=${() => load(next, items)}>Load more</button></p>`}
    <p role="status" class="sr-only">${note}</p>
  </section>`;
}

/**
 * The erasure's confirmation, a modal dialog (as the campaign's approval is):
 * it says what goes, what stays, and that it cannot be undone.
 * @param {{s:any, onClose:()=>void}} p
 */
function EraseDialog({ s, onClose }) {
  const ref = useRef(/** @type {HTMLDialogElement|null} */ (null));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(/** @type {any} */ (null));
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);
  const erase = async () => {
    setBusy(true);
    setError(null);
    try {
      await api('POST', `/v1/subscribers/${s.id}/erase`);
      ref.current?.close();
      toast('Erased: nothing of this person is kept but a hash of the address that keeps it suppressed.');
      go('#/subscribers');
    } catch (err) { setError(err); setBusy(false); }
  };
  return html`<dialog ref=${ref} class="confirm" aria-labelledby="erase-title" aria-describedby="erase-warning" onClose=${onClose} data-erase-confirm>
    <h2 id="erase-title">Erase ${s.email}?</h2>
    <p id="erase-warning"><strong>This is irreversible: it cannot be undone.</strong> The subscriber is deleted and their address, name,
      attributes and content are removed from every send, message, event and tracking record (GDPR Art. 17).
      Only a keyed hash of the address stays, in the suppressions, so the address is suppressed if it ever comes back.
      Counts in campaign reports stay.</p>
    <${ErrorBox} error=${error} />
    <div class="actions">
      <button type="button" class="danger" disabled=${busy} onClick=${erase}>Erase permanently</button>
      <button type="button" class="secondary" disabled=${busy} onClick=${() => ref.current?.close()}>Cancel</button>
    </div>
  </dialog>`;
}

/** @param {{s:any}} p */
export function DataRights({ s }) {
  const [asking, setAsking] = useState(false);
  const reads = can('audience:read'), erases = can('audience:write');
  if (!reads && !erases) return null;
  return html`<section aria-labelledby="data-rights"><h2 id="data-rights">The person's data</h2>
    ${reads && html`<p data-reads>
      <a class="button" data-reads href=${`/v1/subscribers/${s.id}/export`} download=${`subscriber-${s.id}.json`}>Download their data (JSON)</a>
      <small>Everything kept about them: profile, attributes, lists with the evidence of their consent, and their activity (GDPR Art. 15).</small></p>`}
    ${erases && html`<p><button type="button" class="danger" onClick=${() => setAsking(true)}>Erase this person…</button></p>`}
    ${erases && asking && html`<${EraseDialog} s=${s} onClose=${() => setAsking(false)} />`}
  </section>`;
}
