// Transactional messages: the log, filtered by status, recipient and tag, a page at
// a time; and one message with the state of its send. Both refresh when the event
// stream reports the outcome of a message they show.
import { html, useState, useEffect } from './preact-htm.js';
import { api, subscribe, onStreamOpen } from './api.js';
import { Field, Select, ErrorBox, Empty, fieldError, useLoad, when, PageHeader, toast } from './ui.js';
import { usePaged, Pager } from './pager.js';
import { ExportLinks } from './export.js';
import { can } from './perm.js';

const statuses = ['queued', 'sending', 'sent', 'failed', 'suppressed', 'cancelled', 'unknown'];
const final = new Set(['sent', 'failed', 'suppressed', 'cancelled', 'unknown']);

/**
 * Calls reload (at most every half second) when a send.* event concerns the page,
 * and when the stream (re)opens, for what happened before it was listening.
 */
function useSendEvents(/** @type {(e:any)=>boolean} */ concerns, /** @type {()=>void} */ reload, /** @type {any[]} */ deps) {
  useEffect(() => {
    let t = /** @type {any} */ (null);
    const soon = () => { if (!t) t = setTimeout(() => { t = null; reload(); }, 500); };
    const stop = subscribe((ev) => {
      if (String(ev.type || '').startsWith('send.') && concerns(ev.data || {})) soon();
    });
    const stopOpen = onStreamOpen(soon);
    return () => { stop(); stopOpen(); if (t) clearTimeout(t); };
  }, deps);
}

/** @param {{status:string}} p */
export function StatusTag({ status }) {
  return html`<span class=${'tag ' + status} data-status=${status}>${status}</span>`;
}

export function Messages() {
  const [status, setStatus] = useState('');
  const [to, setTo] = useState('');
  const [tag, setTag] = useState('');
  const [filter, setFilter] = useState({ status: '', to: '', tag: '' });
  const q = new URLSearchParams({ limit: '50', order: 'newest' });
  for (const [k, v] of Object.entries(filter)) if (v) q.set(k, v);
  const paged = usePaged('/v1/messages?' + q.toString());
  const { page, error, reload } = paged;
  const open = page ? page.data.filter((/** @type {any} */ m) => !final.has(m.status)).map((/** @type {any} */ m) => m.id) : [];
  useSendEvents((d) => open.includes(d.message_id), reload, [open.join(',')]);
  const filtered = filter.status || filter.to || filter.tag;
  return html`<${PageHeader} title="Messages" />
    <p>Transactional messages sent with <code>POST /v1/messages</code>, newest first.</p>
    <form class="inline" role="search" aria-label="Filter messages" onSubmit=${(/** @type {Event} */ e) => { e.preventDefault(); setFilter({ status, to: to.trim(), tag: tag.trim() }); }}>
      <${Select} label="Status" value=${status} onChange=${setStatus} options=${[['', 'Any status'], ...statuses.map((s) => [s, s])]} error=${fieldError(error, '/status')} />
      <${Field} label="To address" type="search" value=${to} onInput=${setTo} error=${fieldError(error, '/to')} />
      <${Field} label="Tag" type="search" value=${tag} onInput=${setTag} error=${fieldError(error, '/tag')} />
      <button type="submit">Filter</button>
      <button type="button" onClick=${reload}>Refresh</button>
    </form>
    <${ErrorBox} error=${error} />
    ${page && page.data.length === 0 && (filtered
      ? html`<${Empty} title="No message matches these filters."><p>Clear a filter, or check the address (it is matched whole, in any case).</p></${Empty}>`
      : html`<${Empty} title="No messages yet."><p>Send one with <code>POST /v1/messages</code> (an <code>Idempotency-Key</code> header names it);
          it shows here with its status, attempts and the provider's id.</p></${Empty}>`)}
    ${page && page.data.length > 0 && html`<div class="table-wrap"><table class="messages-log">
      <caption class="sr-only">Messages</caption>
      <thead><tr><th scope="col">To</th><th scope="col">Subject</th><th scope="col">Idempotency key</th><th scope="col">Status</th><th scope="col">Tags</th><th scope="col">Attempts</th><th scope="col">Created</th></tr></thead>
      <tbody>${page.data.map((/** @type {any} */ m) => html`<tr key=${m.id}>
        <td><a href=${'#/messages/' + m.id}>${m.to}</a></td><td>${m.subject}</td><td><code>${m.idempotency_key}</code></td>
        <td><${StatusTag} status=${m.status} />${m.feedback && html` <span class="tag failed">${m.feedback}</span>`}</td>
        <td>${m.tags.join(', ')}</td><td>${m.attempts}</td><td>${when(m.created_at)}</td></tr>`)}</tbody>
    </table></div>`}
    <${Pager} paged=${paged} label="Messages" />
    <${ExportLinks} path="/v1/messages/export" params=${filter} name="messages" label="messages" permission="messages:read" />`;
}

/**
 * The route a message named: a sender pool (listed on the senders page), a sender
 * (its own page), or neither (the account's default sender). Names come from the
 * API when the session may read senders; otherwise the id stands for the name.
 * Which sender of a pool took it is the send's via_sender_id, in its send.* events.
 * @param {{m:any}} p
 */
function Route({ m }) {
  const readable = can('senders:read');
  const [named] = useLoad(() => (!readable ? Promise.resolve(null)
    : m.pool_id ? api('GET', '/v1/sender-pools/' + m.pool_id)
    : m.sender_id ? api('GET', '/v1/senders/' + m.sender_id) : Promise.resolve(null)).catch(() => null), [m.pool_id, m.sender_id]);
  if (m.pool_id) {
    return html`<span data-route="pool">pool <a href="#/senders">${named ? named.name : m.pool_id}</a>
      <small>(its first usable sender; the pools are on the senders page)</small></span>`;
  }
  if (m.sender_id) return html`<span data-route="sender">sender <a href=${'#/senders/' + m.sender_id}>${named ? named.name : m.sender_id}</a></span>`;
  return html`<span data-route="default">the default sender</span>`;
}

/** @param {{id:number}} p */
export function MessagePage({ id }) {
  const [m, error, reload] = useLoad(() => api('GET', '/v1/messages/' + id), [id]);
  useSendEvents((d) => d.message_id === id, reload, [id]);
  if (error) return html`<${PageHeader} title=${`Message ${id}`} /><${ErrorBox} error=${error} /><p><a href="#/messages">All messages</a></p>`;
  if (!m) return html`<p class="loading">Loading…</p>`;
  /** @type {Array<[string, any]>} */
  const rows = [
    ['Subject', html`<span data-subject>${m.subject}</span> <small>(as accepted: a template, rendered for the recipient when sent)</small>`],
    ['Status', html`<${StatusTag} status=${m.status} />`],
    ['Attempts', m.attempts],
    ['Provider message id', m.provider_message_id ? html`<code data-provider-id>${m.provider_message_id}</code>` : '—'],
    ['Last error', m.last_error || '—'],
    ['Feedback', m.feedback ? html`${m.feedback} <small>(from the provider's webhook)</small>` : '—'],
    ['To', m.to_name ? `${m.to_name} <${m.to}>` : m.to],
    ['From', m.from_name ? `${m.from_name} <${m.from}>` : m.from],
    ['Reply-To', m.reply_to || '—'],
    ['Category', m.category],
    ['Idempotency key', html`<code>${m.idempotency_key}</code>`],
    ['Template', m.template_id ? html`<a href="#/templates">${m.template_id}</a>` : 'inline content'],
    ['Sent through', html`<${Route} m=${m} />`],
    ['Tags', m.tags.length ? m.tags.join(', ') : '—'],
    ['Send at', when(m.send_at)],
    ['Created', when(m.created_at)],
    ['Sent', when(m.sent_at)],
    ['Updated', when(m.updated_at)],
  ];
  return html`<${PageHeader} title=${`Message ${m.id}`} />
    <p><a href="#/messages">All messages</a></p>
    <dl class="facts">${rows.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>
    ${!final.has(m.status) && html`<p role="status">Not settled yet: this page updates when the send's outcome arrives.</p>`}
    <button type="button" data-reads onClick=${reload}>Refresh</button>`;
}
