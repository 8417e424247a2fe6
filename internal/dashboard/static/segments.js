import { html, useState, useEffect } from './preact-htm.js';
import { api } from './api.js';
import { Field, ErrorBox, Empty, fieldError, num, useLoad, when, PageHeader, toast, plural } from './ui.js';
import { usePaged, Pager } from './pager.js';

const allStatuses = ['pending', 'confirmed', 'unsubscribed'];

/**
 * A segment's filter as the API takes it (what it was made with, the times kept).
 * @param {any} seg
 */
function filterOf(seg) {
  /** @type {any} */
  const f = { match: seg.match, statuses: seg.statuses, list_ids: seg.list_ids };
  if (seg.created_after) f.created_after = seg.created_after;
  if (seg.created_before) f.created_before = seg.created_before;
  return f;
}

/**
 * The names of a segment's lists, from the lists the page has.
 * @param {number[]} ids @param {any[]} lists
 */
function listNames(ids, lists) {
  if (!ids || ids.length === 0) return 'any';
  return ids.map((id) => (lists.find((l) => l.id === id) || { name: `list ${id}` }).name).join(', ');
}

export function Segments() {
  const paged = usePaged('/v1/segments?limit=50');
  const { page, error, reload } = paged;
  const [lists] = useLoad(() => api('GET', '/v1/lists?limit=200'));
  const allLists = lists ? lists.data : [];
  // The segment being edited (null: a new one).
  const [editing, setEditing] = useState(/** @type {any} */ (null));
  const [name, setName] = useState('');
  const [match, setMatch] = useState('');
  const [statuses, setStatuses] = useState(['confirmed']);
  const [listIds, setListIds] = useState(/** @type {number[]} */ ([]));
  const [count, setCount] = useState(/** @type {number|null} */ (null));
  const [previewError, setPreviewError] = useState(/** @type {any} */ (null));
  const [saveError, setSaveError] = useState(/** @type {any} */ (null));
  useEffect(() => {
    // A live count as the predicate is typed, a moment after the last key.
    let live = true;
    const t = setTimeout(() => {
      api('POST', '/v1/segments/preview', { match, statuses, list_ids: listIds }).then(
        (p) => { if (live) { setCount(p.count); setPreviewError(null); } },
        (err) => { if (live) { setCount(null); setPreviewError(err); } });
    }, 300);
    return () => { live = false; clearTimeout(t); };
  }, [match, statuses.join(','), listIds.join(',')]);
  /** @param {any} s */
  const edit = (s) => {
    setEditing(s);
    setName(s ? s.name : ''); setMatch(s ? s.match : '');
    setStatuses(s ? s.statuses : ['confirmed']); setListIds(s ? s.list_ids : []);
    setSaveError(null);
    if (s) setTimeout(() => document.getElementById('segment-form')?.scrollIntoView({ block: 'start' }), 0);
  };
  const save = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setSaveError(null);
    try {
      if (editing) {
        await api('PUT', '/v1/segments/' + editing.id, { ...filterOf(editing), name, match, statuses, list_ids: listIds });
      } else {
        await api('POST', '/v1/segments', { name, match, statuses, list_ids: listIds });
      }
      toast(`Segment ${name} saved.`);
      edit(null);
      reload();
    } catch (err) { setSaveError(err); }
  };
  const remove = async (/** @type {any} */ s) => {
    if (!confirm(`Delete segment ${s.name}?`)) return;
    try { await api('DELETE', '/v1/segments/' + s.id); } catch { /* shown by the reload */ }
    reload();
  };
  /** @param {string} what @param {(x:any[])=>void} set @param {any[]} now @param {any} v */
  const toggle = (what, set, now, v) => (/** @type {any} */ e) => set(e.currentTarget.checked ? [...now, v] : now.filter((x) => x !== v));
  return html`<${PageHeader} title="Segments" />
    <form onSubmit=${save} class="form" id="segment-form" aria-labelledby="segment-form-title">
      <h2 id="segment-form-title">${editing ? `Edit ${editing.name}` : 'New segment'}</h2>
      <${Field} label="Name" value=${name} onInput=${setName} required error=${fieldError(saveError, '/name')} />
      <${Field} label="Match (a jsonpath predicate over attributes)" textarea rows=${2} value=${match} onInput=${setMatch}
        hint='For example: $.plan == "pro" && $.seats > 5. Empty: every subscriber.' error=${fieldError(previewError, '/match') || fieldError(saveError, '/match')} />
      <fieldset><legend>Statuses</legend>
        ${allStatuses.map((s) => html`<label class="check" key=${s}><input type="checkbox" checked=${statuses.includes(s)}
          onChange=${toggle('status', setStatuses, statuses, s)} /> ${s}</label>`)}
      </fieldset>
      <fieldset><legend>In any of these lists (none checked: whatever the lists)</legend>
        ${allLists.length === 0 && html`<p class="hint">No lists yet.</p>`}
        ${allLists.map((/** @type {any} */ l) => html`<label class="check" key=${l.id}><input type="checkbox" checked=${listIds.includes(l.id)}
          onChange=${toggle('list', setListIds, listIds, l.id)} /> ${l.name}</label>`)}
      </fieldset>
      <p role="status" aria-live="polite" class="audience">Matches <strong data-count=${count ?? ''}>${count === null ? '…' : num(count)}</strong> subscribers now.</p>
      ${previewError && !fieldError(previewError, '/match') && html`<${ErrorBox} error=${previewError} quiet />`}
      <${ErrorBox} error=${saveError} />
      <div class="actions">
        <button type="submit" class="primary">${editing ? 'Save changes' : 'Save segment'}</button>
        ${editing && html`<button type="button" onClick=${() => edit(null)}>Cancel editing</button>`}
      </div>
    </form>
    <${ErrorBox} error=${error} />
    ${page && page.data.length === 0 && html`<${Empty} title="No segments yet."><p>Write a predicate above and save it; campaigns can then target it.</p></${Empty}>`}
    ${page && page.data.length > 0 && html`<div class="table-wrap"><table class="segments">
      <caption class="sr-only">Segments</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Match</th><th scope="col">Statuses</th><th scope="col">Lists</th><th scope="col">Updated</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${page.data.map((/** @type {any} */ s) => html`<tr key=${s.id}><td><a href=${'#/segments/' + s.id}>${s.name}</a></td><td><code>${s.match}</code></td><td>${s.statuses.join(', ')}</td>
        <td>${listNames(s.list_ids, allLists)}</td><td>${when(s.updated_at)}</td>
        <td class="row-actions"><button type="button" class="link" onClick=${() => edit(s)} aria-label=${'Edit segment ' + s.name}>Edit</button>
          <button type="button" class="link danger" onClick=${() => remove(s)} aria-label=${'Delete segment ' + s.name}>Delete</button></td></tr>`)}</tbody>
    </table></div>`}
    <${Pager} paged=${paged} label="Segments" />`;
}

/** How many of a segment's members its page shows (the preview's sample). */
const shown = 10;

/**
 * A segment's page: its filter in words and who is in it now (the count, and the
 * first members by id, from POST /v1/segments/preview with its filter).
 * @param {{id:number}} p
 */
export function SegmentPage({ id }) {
  const [seg, error] = useLoad(() => api('GET', '/v1/segments/' + id), [id]);
  const [lists] = useLoad(() => api('GET', '/v1/lists?limit=200'));
  const [members, membersError] = useLoad(() => (seg ? api('POST', '/v1/segments/preview', filterOf(seg)) : Promise.resolve(null)), [seg]);
  if (error) return html`<${PageHeader} title=${`Segment ${id}`} /><${ErrorBox} error=${error} /><p><a href="#/segments">All segments</a></p>`;
  if (!seg) return html`<p class="loading">Loading…</p>`;
  return html`<p><a href="#/segments">← Segments</a></p>
    <${PageHeader} title=${seg.name} />
    <dl class="facts">
      <dt>Match</dt><dd>${seg.match ? html`<code>${seg.match}</code>` : 'every subscriber'}</dd>
      <dt>Statuses</dt><dd>${seg.statuses.length ? seg.statuses.join(', ') : 'any'}</dd>
      <dt>Lists</dt><dd>${listNames(seg.list_ids, lists ? lists.data : [])}</dd>
      ${seg.created_after && html`<dt>Created after</dt><dd>${when(seg.created_after)}</dd>`}
      ${seg.created_before && html`<dt>Created before</dt><dd>${when(seg.created_before)}</dd>`}
      <dt>Updated</dt><dd>${when(seg.updated_at)}</dd>
    </dl>
    <section aria-labelledby="members"><h2 id="members">Members</h2>
      <${ErrorBox} error=${membersError} />
      ${members && html`<p role="status" data-members=${members.count}>${plural(members.count, 'subscriber matches', 'subscribers match')} now${members.count > shown ? `; the first ${shown} by when they were added:` : '.'}</p>`}
      ${members && members.sample.length > 0 && html`<div class="table-wrap"><table class="segment-members">
        <caption class="sr-only">Members of ${seg.name}</caption>
        <thead><tr><th scope="col">Address</th><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Attributes</th><th scope="col">Created</th></tr></thead>
        <tbody>${members.sample.map((/** @type {any} */ s) => html`<tr key=${s.id}><td><a href=${'#/subscribers/' + s.id}>${s.email}</a></td><td>${s.name}</td>
          <td>${s.status}</td><td><code>${JSON.stringify(s.attributes)}</code></td><td>${when(s.created_at)}</td></tr>`)}</tbody>
      </table></div>`}
    </section>`;
}
