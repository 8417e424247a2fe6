import { html, useState } from './preact-htm.js';
import { api } from './api.js';
import { Field, Select, ErrorBox, Empty, fieldError, when, PageHeader, toast } from './ui.js';
import { usePaged, Pager } from './pager.js';
import { ExportLinks } from './export.js';

export function Suppressions() {
  const paged = usePaged('/v1/suppressions?limit=50');
  const { page, error, reload } = paged;
  const [email, setEmail] = useState('');
  const [reason, setReason] = useState('manual');
  const [addError, setAddError] = useState(/** @type {any} */ (null));
  const add = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setAddError(null);
    try { await api('POST', '/v1/suppressions', { email, reason, source: 'dashboard' }); toast(`${email} suppressed.`); setEmail(''); reload(); } catch (err) { setAddError(err); }
  };
  const remove = async (/** @type {any} */ s) => {
    if (!confirm(`Allow mail to ${s.email} again?`)) return;
    try { await api('DELETE', '/v1/suppressions/' + encodeURIComponent(s.email)); } catch { /* shown by the reload */ }
    reload();
  };
  return html`<${PageHeader} title="Suppressions" />
    <p>No campaign or message goes to a suppressed address.</p>
    <form onSubmit=${add} class="inline">
      <${Field} label="Address" type="email" value=${email} onInput=${setEmail} required error=${fieldError(addError, '/email')} />
      <${Select} label="Reason" value=${reason} onChange=${setReason} options=${[['manual', 'manual'], ['unsubscribe', 'unsubscribe'], ['hard_bounce', 'hard bounce'], ['complaint', 'complaint']]} />
      <button type="submit" class="primary">Suppress</button>
    </form>
    <${ErrorBox} error=${addError} />
    <${ErrorBox} error=${error} />
    ${page && page.data.length === 0 && html`<${Empty} title="No suppressed addresses."><p>Bounces, complaints and opt-outs land here by themselves.</p></${Empty}>`}
    ${page && page.data.length > 0 && html`<div class="table-wrap"><table>
      <caption class="sr-only">Suppressions</caption>
      <thead><tr><th scope="col">Address</th><th scope="col">Reason</th><th scope="col">Source</th><th scope="col">Since</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${page.data.map((/** @type {any} */ s) => html`<tr key=${s.email}><td>${s.email}</td><td>${s.reason}</td><td>${s.source}</td><td>${when(s.created_at)}</td>
        <td><button type="button" class="link" onClick=${() => remove(s)} aria-label=${'Remove suppression of ' + s.email}>Remove</button></td></tr>`)}</tbody>
    </table></div>`}
    <${Pager} paged=${paged} label="Suppressions" />
    <${ExportLinks} path="/v1/suppressions/export" name="suppressions" label="suppressions" permission="audience:read" />`;
}
