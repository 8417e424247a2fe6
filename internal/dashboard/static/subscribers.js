import { html, useState } from './preact-htm.js';
import { api, upload } from './api.js';
import { Field, Select, ErrorBox, Empty, fieldError, useLoad, when, num, useId, plural, PageHeader, toast } from './ui.js';
import { usePaged, Pager } from './pager.js';
import { ExportLinks } from './export.js';

/** @param {{lists:any[], onDone:()=>void}} p */
function Import({ lists, onDone }) {
  const [file, setFile] = useState(/** @type {File|null} */ (null));
  const [listId, setListId] = useState('');
  // The status of rows that name none: a CSV without a status column would
  // otherwise import everyone pending, whom no campaign reaches.
  const [status, setStatus] = useState('confirmed');
  const [sent, setSent] = useState(/** @type {[number,number]|null} */ (null));
  const [result, setResult] = useState(/** @type {any} */ (null));
  const [error, setError] = useState(/** @type {any} */ (null));
  const [busy, setBusy] = useState(false);
  const fileId = useId('csv');
  const progressId = useId('upload');
  const submit = async (/** @type {Event} */ e) => {
    e.preventDefault();
    if (!file) return;
    setBusy(true);
    setError(null);
    setResult(null);
    setSent([0, file.size]);
    try {
      const q = new URLSearchParams({ status });
      if (listId) q.set('list_id', listId);
      const r = await upload('/v1/subscribers/import?' + q.toString(), file, (a, b) => setSent([a, b]));
      setResult(r);
      onDone();
    } catch (err) { setError(err); }
    setBusy(false);
  };
  return html`<section aria-labelledby="import"><h2 id="import">Import a CSV</h2>
    <p>A header line, then one subscriber a line: <code>email</code> (required), <code>name</code>, <code>status</code> (pending or confirmed), <code>attributes</code> (JSON); any other column becomes an attribute.</p>
    <form onSubmit=${submit} class="inline">
      <div class="field"><label for=${fileId}>CSV file</label>
        <input id=${fileId} type="file" accept=".csv,text/csv" required onChange=${(/** @type {any} */ e) => setFile(e.currentTarget.files[0] || null)} /></div>
      <${Select} label="Also add to list" value=${listId} onChange=${setListId} options=${[['', 'No list'], ...lists.map((/** @type {any} */ l) => [String(l.id), l.name])]} />
      <${Select} label="Status of rows without one" value=${status} onChange=${setStatus}
        options=${[['confirmed', 'confirmed: they agreed to receive mail'], ['pending', 'pending: not confirmed, no campaign reaches them']]} />
      <button type="submit" class="primary" disabled=${busy || !file}>Import</button>
    </form>
    <p class="hint" data-consent-note>${status === 'confirmed'
      ? 'Import as confirmed only people who agreed to receive your mail (you may have to show when and how they did). An unsubscribed address stays unsubscribed.'
      : 'Pending subscribers get no campaign until they are confirmed (on their page, or by importing them again as confirmed). For a double opt-in list, have them sign up through its form, which sends the confirmation email.'}</p>
    ${sent && html`<div class="field"><label for=${progressId}>Upload ${sent[1] ? Math.floor((sent[0] * 100) / sent[1]) : 0} %${busy && sent[0] >= sent[1] ? ', importing…' : ''}</label>
      <progress id=${progressId} max=${sent[1] || 1} value=${sent[0]}></progress></div>`}
    <${ErrorBox} error=${error} />
    ${result && html`<div class="summary" role="status" data-import="done">
      <p data-summary><strong data-inserted=${result.inserted}>${num(result.inserted)}</strong> inserted, <strong data-updated=${result.updated}>${num(result.updated)}</strong> updated, <strong data-rejected=${result.rejected.length}>${num(result.rejected.length)}</strong> rejected${status === 'pending' ? ' (new ones pending)' : ''}.</p>
      ${result.rejected.length > 0 && html`<div class="table-wrap"><table><caption>Rejected rows</caption>
        <thead><tr><th scope="col">Line</th><th scope="col">Address</th><th scope="col">Reason</th></tr></thead>
        <tbody>${result.rejected.slice(0, 200).map((/** @type {any} */ r) => html`<tr key=${r.line}><td>${r.line}</td><td>${r.email}</td><td>${r.reason}</td></tr>`)}</tbody>
      </table></div>`}
    </div>`}
  </section>`;
}

/** @param {{onDone:()=>void}} p */
function Create({ onDone }) {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [attrs, setAttrs] = useState('{}');
  const [error, setError] = useState(/** @type {any} */ (null));
  const submit = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    let attributes;
    try { attributes = JSON.parse(attrs || '{}'); } catch { setError({ message: 'Attributes must be a JSON object.' }); return; }
    try {
      await api('POST', '/v1/subscribers', { email, name, attributes, status: 'confirmed' });
      toast(`${email} added.`);
      setEmail(''); setName(''); setAttrs('{}');
      onDone();
    } catch (err) { setError(err); }
  };
  return html`<details><summary>Add one subscriber</summary>
    <form onSubmit=${submit} class="form">
      <${Field} label="Address" type="email" value=${email} onInput=${setEmail} required error=${fieldError(error, '/email')} />
      <${Field} label="Name" value=${name} onInput=${setName} error=${fieldError(error, '/name')} />
      <${Field} label="Attributes (JSON)" textarea rows=${3} value=${attrs} onInput=${setAttrs} error=${fieldError(error, '/attributes')} />
      <${ErrorBox} error=${error} />
      <button type="submit">Add</button>
    </form></details>`;
}

export function Subscribers() {
  const [q, setQ] = useState('');
  const [search, setSearch] = useState('');
  const filter = search ? 'email=' + encodeURIComponent(search.toLowerCase()) : '';
  const paged = usePaged('/v1/subscribers?limit=50' + (filter ? '&' + filter : ''));
  const { page, error } = paged;
  const [total, , reloadTotal] = useLoad(() => api('GET', '/v1/subscribers/count' + (filter ? '?' + filter : '')), [filter]);
  const reload = () => { paged.reload(); reloadTotal(); };
  const [lists, , reloadLists] = useLoad(() => api('GET', '/v1/lists?limit=200'));
  const [listName, setListName] = useState('');
  const [listError, setListError] = useState(/** @type {any} */ (null));
  const remove = async (/** @type {any} */ s) => {
    if (!confirm(`Delete ${s.email}?`)) return;
    try { await api('DELETE', '/v1/subscribers/' + s.id); } catch { /* shown by the reload */ }
    reload();
  };
  const addList = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setListError(null);
    try { await api('POST', '/v1/lists', { name: listName }); toast(`List ${listName} created.`); setListName(''); reloadLists(); } catch (err) { setListError(err); }
  };
  return html`<${PageHeader} title="Subscribers" />
    <${Import} lists=${lists ? lists.data : []} onDone=${() => { reload(); reloadLists(); }} />
    <section aria-labelledby="lists"><h2 id="lists">Lists</h2>
      ${lists && html`<ul class="plain">${lists.data.map((/** @type {any} */ l) => html`<li key=${l.id}><a href=${'#/lists/' + l.id}>${l.name}</a>: ${plural(l.member_count, 'member')}</li>`)}</ul>`}
      <form onSubmit=${addList} class="inline">
        <${Field} label="New list name" value=${listName} onInput=${setListName} required error=${fieldError(listError, '/name')} />
        <button type="submit">Create list</button>
      </form>
      <${ErrorBox} error=${listError} />
    </section>
    <section aria-labelledby="people"><h2 id="people">People</h2>
      <${Create} onDone=${reload} />
      <form onSubmit=${(/** @type {Event} */ e) => { e.preventDefault(); setSearch(q); }} class="inline" role="search">
        <${Field} label="Address starts with" type="search" value=${q} onInput=${setQ} />
        <button type="submit">Search</button>
      </form>
      <${ErrorBox} error=${error} />
      ${total && html`<p role="status" data-total=${total.count} data-exact=${String(total.exact)}>${total.exact
        ? plural(total.count, search ? 'subscriber matches' : 'subscriber', search ? 'subscribers match' : 'subscribers')
        : `More than ${num(total.count)} subscribers${search ? ' match' : ''} (counted up to ${num(total.count)}; not counted further)`}.</p>`}
      ${page && page.data.length === 0 && html`<${Empty} title=${search ? 'No address starts with that.' : 'No subscribers yet.'}><p>Import a CSV above, or add one.</p></${Empty}>`}
      ${page && page.data.length > 0 && html`<div class="table-wrap"><table>
        <caption class="sr-only">Subscribers</caption>
        <thead><tr><th scope="col">Address</th><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Attributes</th><th scope="col">Created</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
        <tbody>${page.data.map((/** @type {any} */ s) => html`<tr key=${s.id}><td><a href=${'#/subscribers/' + s.id}>${s.email}</a></td><td>${s.name}</td><td>${s.status}</td>
          <td><code>${JSON.stringify(s.attributes)}</code></td><td>${when(s.created_at)}</td>
          <td><button type="button" class="link danger" onClick=${() => remove(s)} aria-label=${'Delete ' + s.email}>Delete</button></td></tr>`)}</tbody>
      </table></div>`}
      <${Pager} paged=${paged} label="Subscribers" />
      <${ExportLinks} path="/v1/subscribers/export" params=${{ email: search.toLowerCase() }} name="subscribers" label="subscribers" permission="audience:read" />
    </section>`;
}
