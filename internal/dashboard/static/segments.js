import { html, useState, useEffect } from './preact-htm.js';
import { api } from './api.js';
import { Field, ErrorBox, Empty, fieldError, num, PageHeader, toast } from './ui.js';
import { usePaged, Pager } from './pager.js';

const allStatuses = ['pending', 'confirmed', 'unsubscribed'];

export function Segments() {
  const paged = usePaged('/v1/segments?limit=50');
  const { page, error, reload } = paged;
  const [name, setName] = useState('');
  const [match, setMatch] = useState('');
  const [statuses, setStatuses] = useState(['confirmed']);
  const [count, setCount] = useState(/** @type {number|null} */ (null));
  const [previewError, setPreviewError] = useState(/** @type {any} */ (null));
  const [saveError, setSaveError] = useState(/** @type {any} */ (null));
  useEffect(() => {
    // A live count as the predicate is typed, a moment after the last key.
    let live = true;
    const t = setTimeout(() => {
      api('POST', '/v1/segments/preview', { match, statuses }).then(
        (p) => { if (live) { setCount(p.count); setPreviewError(null); } },
        (err) => { if (live) { setCount(null); setPreviewError(err); } });
    }, 300);
    return () => { live = false; clearTimeout(t); };
  }, [match, statuses.join(',')]);
  const save = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setSaveError(null);
    try {
      await api('POST', '/v1/segments', { name, match, statuses });
      toast(`Segment ${name} saved.`);
      setName(''); setMatch('');
      reload();
    } catch (err) { setSaveError(err); }
  };
  const remove = async (/** @type {any} */ s) => {
    if (!confirm(`Delete segment ${s.name}?`)) return;
    try { await api('DELETE', '/v1/segments/' + s.id); } catch { /* shown by the reload */ }
    reload();
  };
  return html`<${PageHeader} title="Segments" />
    <form onSubmit=${save} class="form">
      <${Field} label="Name" value=${name} onInput=${setName} required error=${fieldError(saveError, '/name')} />
      <${Field} label="Match (a jsonpath predicate over attributes)" textarea rows=${2} value=${match} onInput=${setMatch}
        hint='For example: $.plan == "pro" && $.seats > 5. Empty: every subscriber.' error=${fieldError(previewError, '/match') || fieldError(saveError, '/match')} />
      <fieldset><legend>Statuses</legend>
        ${allStatuses.map((s) => html`<label class="check" key=${s}><input type="checkbox" checked=${statuses.includes(s)}
          onChange=${(/** @type {any} */ e) => setStatuses(e.currentTarget.checked ? [...statuses, s] : statuses.filter((x) => x !== s))} /> ${s}</label>`)}
      </fieldset>
      <p role="status" aria-live="polite" class="audience">Matches <strong data-count=${count ?? ''}>${count === null ? '…' : num(count)}</strong> subscribers now.</p>
      ${previewError && !fieldError(previewError, '/match') && html`<${ErrorBox} error=${previewError} quiet />`}
      <${ErrorBox} error=${saveError} />
      <button type="submit" class="primary">Save segment</button>
    </form>
    <${ErrorBox} error=${error} />
    ${page && page.data.length === 0 && html`<${Empty} title="No segments yet."><p>Write a predicate above and save it; campaigns can then target it.</p></${Empty}>`}
    ${page && page.data.length > 0 && html`<div class="table-wrap"><table>
      <caption class="sr-only">Segments</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Match</th><th scope="col">Statuses</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${page.data.map((/** @type {any} */ s) => html`<tr key=${s.id}><td>${s.name}</td><td><code>${s.match}</code></td><td>${s.statuses.join(', ')}</td>
        <td><button type="button" class="link danger" onClick=${() => remove(s)} aria-label=${'Delete segment ' + s.name}>Delete</button></td></tr>`)}</tbody>
    </table></div>`}
    <${Pager} paged=${paged} label="Segments" />`;
}
