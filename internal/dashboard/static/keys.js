import { html, useState } from './preact-htm.js';
import { api } from './api.js';
import { Field, Select, ErrorBox, fieldError, when, useId, PageHeader, toast } from './ui.js';
import { usePaged, Pager } from './pager.js';

export function Keys() {
  const paged = usePaged('/v1/api-keys?limit=50');
  const { page, error, reload } = paged;
  const [name, setName] = useState('');
  const [role, setRole] = useState('full');
  const [created, setCreated] = useState(/** @type {any} */ (null));
  const [link, setLink] = useState(/** @type {any} */ (null));
  const [actionError, setActionError] = useState(/** @type {any} */ (null));
  const tokenId = useId('token');
  const create = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setActionError(null);
    try { setCreated(await api('POST', '/v1/api-keys', { name, role })); setName(''); reload(); } catch (err) { setActionError(err); }
  };
  const revoke = async (/** @type {any} */ k) => {
    if (!confirm(`Revoke ${k.name} (${k.prefix}…)? Whatever uses it stops working.`)) return;
    try { await api('DELETE', '/v1/api-keys/' + k.id); toast(`Key ${k.name} revoked.`); } catch (err) { setActionError(err); }
    reload();
  };
  const newLink = async () => {
    setActionError(null);
    try { setLink(await api('POST', '/v1/login-links')); } catch (err) { setActionError(err); }
  };
  return html`<${PageHeader} title="API keys" />
    <form onSubmit=${create} class="inline">
      <${Field} label="Name of a new key" value=${name} onInput=${setName} required error=${fieldError(actionError, '/name')} />
      <${Select} label="Role" value=${role} onChange=${setRole} error=${fieldError(actionError, '/role')}
        options=${[['full', 'Full: read and change'], ['read_only', 'Read-only: read and watch']]} />
      <button type="submit" class="primary">Create key</button>
    </form>
    ${created && html`<div class="notice" role="status">
      <label for=${tokenId}>The key ${created.name}: copy it now, it is not shown again.</label>
      <input id=${tokenId} readonly value=${created.token} onFocus=${(/** @type {any} */ e) => e.currentTarget.select()} />
      <button type="button" class="link" onClick=${() => setCreated(null)}>I have copied it</button></div>`}
    <${ErrorBox} error=${actionError} />
    <${ErrorBox} error=${error} />
    ${page && html`<div class="table-wrap"><table>
      <caption class="sr-only">API keys</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Starts with</th><th scope="col">Role</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Revoked</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${page.data.map((/** @type {any} */ k) => html`<tr key=${k.id}><td>${k.name}</td><td><code>${k.prefix}</code></td><td data-role=${k.role}>${k.role === 'read_only' ? 'read-only' : 'full'}</td><td>${when(k.created_at)}</td>
        <td>${when(k.last_used_at)}</td><td>${when(k.revoked_at)}</td>
        <td>${!k.revoked_at && html`<button type="button" class="link danger" onClick=${() => revoke(k)} aria-label=${'Revoke ' + k.name}>Revoke</button>`}</td></tr>`)}</tbody>
    </table></div>`}
    <${Pager} paged=${paged} label="API keys" />
    <section aria-labelledby="links"><h2 id="links">Login link</h2>
      <p>A link that signs a browser in once, within 15 minutes, with no key.</p>
      <button type="button" onClick=${newLink}>New login link</button>
      ${link && html`<p class="notice" role="status"><a href=${link.url}>${link.url}</a> (until ${when(link.expires_at)})</p>`}
    </section>`;
}
