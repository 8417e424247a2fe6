// One subscriber: its fields and attributes (JSON, checked in the browser before
// sending, the API's 422 at the field it names), deletion, and the lists it is in
// (GET /v1/subscribers/{id}/lists), with adding to and removing from one; its
// activity, data export and erasure (person.js).
import { html, useState } from './preact-htm.js';
import { api, Problem } from './api.js';
import { Field, Select, ErrorBox, fieldError, useLoad, when, go, PageHeader, toast } from './ui.js';
import { Activity, DataRights } from './person.js';

/**
 * The lists the subscriber is in, and how, and the first page of the account's
 * lists (200) to add it to; more are asked for a page at a time.
 * @param {any} s
 */
async function membershipsOf(s) {
  const [mine, lists] = await Promise.all([api('GET', `/v1/subscribers/${s.id}/lists`), api('GET', '/v1/lists?limit=200')]);
  return {
    rows: mine.data.map((/** @type {any} */ m) => ({ list: { id: m.list_id, name: m.name }, membership: m.status })),
    lists: lists.data, next: lists.next_cursor,
    any: lists.data.length > 0,
  };
}

/** @param {{s:any, onSaved:(s:any)=>void}} p */
function EditForm({ s, onSaved }) {
  const [email, setEmail] = useState(s.email);
  const [name, setName] = useState(s.name);
  const [status, setStatus] = useState(s.status);
  const [attrs, setAttrs] = useState(JSON.stringify(s.attributes, null, 2));
  const [jsonError, setJsonError] = useState('');
  const [error, setError] = useState(/** @type {any} */ (null));
  const [saved, setSaved] = useState(false);
  const submit = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    setSaved(false);
    let attributes;
    try {
      attributes = JSON.parse(attrs);
    } catch (err) {
      setJsonError(`Not valid JSON: ${err instanceof Error ? err.message : err}. Nothing was sent.`);
      return;
    }
    if (attributes === null || typeof attributes !== 'object' || Array.isArray(attributes)) {
      setJsonError('The attributes are a JSON object, such as {"plan": "pro"}. Nothing was sent.');
      return;
    }
    setJsonError('');
    // Confirming by hand says the person agreed to receive mail: ask, above all for
    // someone who unsubscribed.
    if (status === 'confirmed' && s.status !== 'confirmed' && !confirm(s.status === 'unsubscribed'
      ? `${s.email} unsubscribed. Mark them confirmed only if they asked to receive mail again. Continue?`
      : `Mark ${s.email} confirmed? Only if they agreed to receive your mail.`)) return;
    try {
      onSaved(await api('PATCH', '/v1/subscribers/' + s.id, { email, name, status, attributes }));
      toast('Subscriber saved.');
      setSaved(true);
    } catch (err) { setError(err); }
  };
  return html`<form onSubmit=${submit} class="form" aria-label="Edit the subscriber">
    <${Field} label="Address" type="email" value=${email} onInput=${setEmail} required error=${fieldError(error, '/email')} />
    <${Field} label="Name" value=${name} onInput=${setName} error=${fieldError(error, '/name')} />
    <${Select} label="Status" value=${status} onChange=${setStatus} error=${fieldError(error, '/status')}
      options=${[['pending', 'pending'], ['confirmed', 'confirmed'], ['unsubscribed', 'unsubscribed']]} />
    <${Field} label="Attributes (JSON object)" textarea rows=${8} value=${attrs} onInput=${(/** @type {string} */ v) => { setAttrs(v); setJsonError(''); }}
      hint="Replaces the attributes whole; templates see them as .Attributes." error=${jsonError || fieldError(error, '/attributes')} />
    <${ErrorBox} error=${error} />
    ${saved && html`<p role="status" data-saved>Saved.</p>`}
    <button type="submit" class="primary">Save subscriber</button>
  </form>`;
}

/** @param {{s:any}} p */
function Memberships({ s }) {
  const [m, error, reload] = useLoad(() => membershipsOf(s), [s.id, s.email]);
  const [listId, setListId] = useState('');
  const [actionError, setActionError] = useState(/** @type {any} */ (null));
  // Lists past the first page, added by "More lists" (the cursor of the next page).
  const [more, setMore] = useState(/** @type {{lists:any[], next:string|null}|null} */ (null));
  const [moreNote, setMoreNote] = useState('');
  const loadMore = async () => {
    const cursor = more ? more.next : m && m.next;
    if (!cursor) return;
    setActionError(null);
    try {
      const p = await api('GET', '/v1/lists?limit=200&cursor=' + encodeURIComponent(cursor));
      setMore({ lists: [...(more ? more.lists : []), ...p.data], next: p.next_cursor });
      setMoreNote(`${p.data.length} more lists to choose from${p.next_cursor ? '; there are more still' : ''}.`);
    } catch (err) { setActionError(err); }
  };
  const change = async (/** @type {string} */ method, /** @type {number} */ id) => {
    setActionError(null);
    try { await api(method, `/v1/lists/${id}/members`, { subscriber_ids: [s.id] }); setListId(''); reload(); } catch (err) { setActionError(err); }
  };
  if (error) return html`<${ErrorBox} error=${error} />`;
  if (!m) return html`<p class="loading">Loading its lists…</p>`;
  const inLists = m.rows;
  const inIds = new Set(inLists.map((/** @type {any} */ r) => r.list.id));
  const others = [...m.lists, ...(more ? more.lists : [])].filter((l) => !inIds.has(l.id));
  const next = more ? more.next : m.next;
  return html`
    ${inLists.length === 0 ? html`<p>Not in any list.</p>`
      : html`<ul class="plain memberships">${inLists.map((r) => html`<li key=${r.list.id}>
          <a href=${'#/lists/' + r.list.id}>${r.list.name}</a> <span class="tag">${r.membership}</span>
          ${r.membership === 'subscribed' && s.status !== 'confirmed' && html`<small data-gets-nothing>(gets nothing from it: the subscriber is ${s.status})</small>`}
          <button type="button" class="link danger" onClick=${() => change('DELETE', r.list.id)} aria-label=${`Remove from ${r.list.name}`}>Remove</button></li>`)}</ul>`}
    ${others.length > 0 && html`<form class="inline" aria-label="Add to a list" onSubmit=${(/** @type {Event} */ e) => { e.preventDefault(); if (listId) change('POST', Number(listId)); }}>
      <${Select} label="Add to list" value=${listId} onChange=${setListId} options=${[['', 'Choose a list'], ...others.map((/** @type {any} */ l) => [String(l.id), l.name])]} />
      <button type="submit" disabled=${!listId}>Add</button>
      ${next && html`<button type="button" class="secondary" onClick=${loadMore}>More lists</button>`}
    </form>`}
    ${others.length === 0 && next && html`<p><button type="button" class="secondary" onClick=${loadMore}>More lists</button></p>`}
    <p role="status" class="sr-only">${moreNote}</p>
    ${!m.any && html`<p><a href="#/lists">Create a list</a> to group subscribers.</p>`}
    <${ErrorBox} error=${actionError} />`;
}

/**
 * Whether the address is suppressed, why, by what and since when: a suppression
 * wins over the status and every list.
 * @param {{email:string}} p
 */
function Suppressed({ email }) {
  const [x, error] = useLoad(() => api('GET', '/v1/suppressions/' + encodeURIComponent(email))
    .catch((err) => (err instanceof Problem && err.status === 404 ? null : Promise.reject(err))), [email]);
  if (error) return html`<${ErrorBox} error=${error} />`;
  if (x === undefined) return html`…`;
  if (x === null) return html`<span data-suppressed="no">no</span>`;
  return html`<span data-suppressed=${x.reason}><strong>yes: ${x.reason.replace('_', ' ')}</strong>, by ${x.source || 'unknown'}, since ${when(x.created_at)}.
    No campaign or message reaches it, whatever its status and lists (<a href="#/suppressions">Suppressions</a>).</span>`;
}

/** @param {{id:number}} p */
export function SubscriberPage({ id }) {
  const [s, error, reload] = useLoad(() => api('GET', '/v1/subscribers/' + id), [id]);
  const [actionError, setActionError] = useState(/** @type {any} */ (null));
  if (error) return html`<${PageHeader} title=${`Subscriber ${id}`} /><${ErrorBox} error=${error} /><p><a href="#/subscribers">All subscribers</a></p>`;
  if (!s) return html`<p class="loading">Loading…</p>`;
  const remove = async () => {
    if (!confirm(`Delete ${s.email}? Its past sends are kept.`)) return;
    setActionError(null);
    try { await api('DELETE', '/v1/subscribers/' + s.id); go('#/subscribers'); } catch (err) { setActionError(err); }
  };
  return html`<${PageHeader} title=${s.email} />
    <p><a href="#/subscribers">All subscribers</a></p>
    <dl class="facts">
      <dt>Status</dt><dd><span class="tag" data-status=${s.status}>${s.status}</span></dd>
      <dt>Suppressed</dt><dd><${Suppressed} email=${s.email} /></dd>
      <dt>Created</dt><dd>${when(s.created_at)}</dd>
      <dt>Updated</dt><dd>${when(s.updated_at)}</dd>
    </dl>
    <h2>Lists</h2>
    <${Memberships} s=${s} />
    <${Activity} id=${s.id} />
    <h2>Edit</h2>
    <${EditForm} s=${s} onSaved=${reload} />
    <h2>Delete</h2>
    <${ErrorBox} error=${actionError} />
    <p><button type="button" class="danger" onClick=${remove}>Delete subscriber</button></p>
    <${DataRights} s=${s} />`;
}
