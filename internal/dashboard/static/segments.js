import { html, useState, useEffect } from './preact-htm.js';
import { api } from './api.js';
import { Field, Select, ErrorBox, Empty, fieldError, num, useLoad, when, PageHeader, toast, plural } from './ui.js';
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
  if (seg.engagement) f.engagement = seg.engagement;
  return f;
}

/** The engagement conditions the editor offers: [value, label]. */
const engagementChoices = /** @type {Array<[string,string]>} */ ([
  ['', 'No engagement condition'], ['opened', 'Opened'], ['not-opened', 'Received and did not open'],
  ['clicked', 'Clicked'], ['not-clicked', 'Received and did not click'],
]);

/**
 * The editor's engagement state as the API's condition (undefined: none).
 * @param {{cond:string, scope:string, campaign:string, days:string, people:boolean}} e
 */
function engagementOf(e) {
  if (!e.cond) return undefined;
  /** @type {any} */
  const out = { kind: e.cond.replace('not-', ''), negated: e.cond.startsWith('not-'), people_only: e.people };
  if (e.scope === 'days') out.within_days = Number(e.days);
  else out.campaign_id = Number(e.campaign);
  return out;
}

/** @param {any} seg */
function engagementState(seg) {
  const g = seg && seg.engagement;
  if (!g) return { cond: '', scope: 'campaign', campaign: '', days: '30', people: true };
  return { cond: (g.negated ? 'not-' : '') + g.kind, scope: g.within_days ? 'days' : 'campaign',
    campaign: g.campaign_id ? String(g.campaign_id) : '', days: String(g.within_days || 30), people: g.people_only !== false };
}

/**
 * An engagement condition in words.
 * @param {any} g @param {any[]} campaigns
 */
function engagementWords(g, campaigns) {
  if (!g) return 'none';
  const verb = g.kind === 'opened' ? 'open' : 'click';
  const what = g.campaign_id
    ? (campaigns.find((c) => c.id === g.campaign_id) || { name: `campaign ${g.campaign_id}` }).name
    : `any message in the last ${g.within_days} days`;
  const who = g.people_only === false ? '' : ' (people only)';
  return g.negated ? `received ${what} and did not ${verb}${who}` : `${g.kind} ${what}${who}`;
}

/**
 * The names of a segment's lists, from the lists the page has.
 * @param {number[]} ids @param {any[]} lists
 */
function listNames(ids, lists) {
  if (!ids || ids.length === 0) return 'any';
  return ids.map((id) => (lists.find((l) => l.id === id) || { name: `list ${id}` }).name).join(', ');
}

/** How many segments the list shows a page. */
const segmentsPage = 50;

export function Segments() {
  // The name filter: typed in q, applied (to the API's ?name=) a moment after the last key, or at once on Enter.
  const [q, setQ] = useState('');
  const [applied, setApplied] = useState('');
  useEffect(() => {
    const t = setTimeout(() => setApplied(q.trim()), 300);
    return () => clearTimeout(t);
  }, [q]);
  const paged = usePaged(`/v1/segments?limit=${segmentsPage}` + (applied ? '&name=' + encodeURIComponent(applied) : ''));
  const { page, error, reload } = paged;
  const [lists] = useLoad(() => api('GET', '/v1/lists?limit=200'));
  const allLists = lists ? lists.data : [];
  // The segment being edited (null: a new one).
  const [editing, setEditing] = useState(/** @type {any} */ (null));
  const [name, setName] = useState('');
  const [match, setMatch] = useState('');
  const [statuses, setStatuses] = useState(['confirmed']);
  const [listIds, setListIds] = useState(/** @type {number[]} */ ([]));
  const [eng, setEng] = useState(engagementState(null));
  const [campaigns] = useLoad(() => api('GET', '/v1/campaigns?limit=200&order=newest'));
  const allCampaigns = campaigns ? campaigns.data : [];
  const engagement = engagementOf(eng);
  /** @param {any} change */
  const setE = (change) => setEng({ ...eng, ...change });
  const [count, setCount] = useState(/** @type {{count:number, exact:boolean}|null} */ (null));
  const [previewError, setPreviewError] = useState(/** @type {any} */ (null));
  const [saveError, setSaveError] = useState(/** @type {any} */ (null));
  useEffect(() => {
    // A live count as the predicate is typed, a moment after the last key.
    let live = true;
    const t = setTimeout(() => {
      if (engagement && engagement.campaign_id === 0) { setCount(null); setPreviewError(null); return; }
      api('POST', '/v1/segments/preview', { match, statuses, list_ids: listIds, engagement }).then(
        (p) => { if (live) { setCount(p); setPreviewError(null); } },
        (err) => { if (live) { setCount(null); setPreviewError(err); } });
    }, 300);
    return () => { live = false; clearTimeout(t); };
  }, [match, statuses.join(','), listIds.join(','), JSON.stringify(engagement)]);
  /** @param {any} s */
  const edit = (s) => {
    setEditing(s);
    setName(s ? s.name : ''); setMatch(s ? s.match : '');
    setStatuses(s ? s.statuses : ['confirmed']); setListIds(s ? s.list_ids : []);
    setEng(engagementState(s));
    setSaveError(null);
    if (s) setTimeout(() => document.getElementById('segment-form')?.scrollIntoView({ block: 'start' }), 0);
  };
  const save = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setSaveError(null);
    try {
      if (editing) {
        await api('PUT', '/v1/segments/' + editing.id, { ...filterOf(editing), name, match, statuses, list_ids: listIds, engagement });
      } else {
        await api('POST', '/v1/segments', { name, match, statuses, list_ids: listIds, engagement });
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
      <fieldset class="engagement"><legend>Engagement</legend>
        <${Select} label="Condition" value=${eng.cond} onChange=${(/** @type {string} */ v) => setE({ cond: v })} options=${engagementChoices} />
        ${eng.cond && html`
          <fieldset><legend>Of</legend>
            <label class="check"><input type="radio" name="engagement-scope" checked=${eng.scope === 'campaign'}
              onChange=${() => setE({ scope: 'campaign' })} /> one campaign</label>
            <label class="check"><input type="radio" name="engagement-scope" checked=${eng.scope === 'days'}
              onChange=${() => setE({ scope: 'days' })} /> any message within some days</label>
          </fieldset>
          ${eng.scope === 'campaign'
            ? html`<${Select} label="Campaign" value=${eng.campaign} onChange=${(/** @type {string} */ v) => setE({ campaign: v })}
                options=${[['', 'Choose a campaign'], ...allCampaigns.map((/** @type {any} */ c) => [String(c.id), c.name])]}
                error=${fieldError(previewError, '/engagement/campaign_id') || fieldError(saveError, '/engagement/campaign_id')} />`
            : html`<${Field} label="Within the last days (1 to 365)" type="number" value=${eng.days} onInput=${(/** @type {string} */ v) => setE({ days: v })}
                error=${fieldError(previewError, '/engagement/within_days') || fieldError(saveError, '/engagement/within_days')} />`}
          <label class="check"><input type="checkbox" checked=${eng.people} onChange=${(/** @type {any} */ e) => setE({ people: e.currentTarget.checked })} />
            People only (leave out opens and clicks suspected of being scanners)</label>
          ${eng.cond.startsWith('not-') && html`<p class="hint">Only people the campaign (or, within days, any message) was sent to: someone it was never sent to is not a non-opener.</p>`}`}
      </fieldset>
      <p role="status" aria-live="polite" class="audience">Matches <strong data-count=${count ? count.count : ''} data-exact=${count ? String(count.exact) : ''}>${count === null ? '…' : (count.exact ? '' : 'more than ') + num(count.count)}</strong> subscribers now.</p>
      ${previewError && !fieldError(previewError, '/match') && html`<${ErrorBox} error=${previewError} quiet />`}
      <${ErrorBox} error=${saveError} />
      <div class="actions">
        <button type="submit" class="primary">${editing ? 'Save changes' : 'Save segment'}</button>
        ${editing && html`<button type="button" onClick=${() => edit(null)}>Cancel editing</button>`}
      </div>
    </form>
    <section aria-labelledby="saved-segments"><h2 id="saved-segments">Saved segments</h2>
    <form role="search" aria-label="Filter segments" class="inline" onSubmit=${(/** @type {Event} */ e) => { e.preventDefault(); setApplied(q.trim()); }}>
      <${Field} label="Segment name contains" type="search" value=${q} onInput=${setQ} hint="Any case; the list narrows as you type."
        error=${fieldError(error, '/name')} />
    </form>
    <${ErrorBox} error=${error} />
    ${page && page.data.length === 0 && !applied && html`<${Empty} title="No segments yet."><p>Write a predicate above and save it; campaigns can then target it.</p></${Empty}>`}
    ${page && page.data.length === 0 && applied && html`<${Empty} title="No segment's name contains that."><p>Try fewer letters, or clear the filter to see every segment.</p></${Empty}>`}
    ${page && page.data.length > 0 && html`<div class="table-wrap"><table class="segments">
      <caption class="sr-only">Segments</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Match</th><th scope="col">Statuses</th><th scope="col">Lists</th><th scope="col">Updated</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${page.data.map((/** @type {any} */ s) => html`<tr key=${s.id}><td><a href=${'#/segments/' + s.id}>${s.name}</a></td><td><code>${s.match}</code></td><td>${s.statuses.join(', ')}</td>
        <td>${listNames(s.list_ids, allLists)}</td><td>${when(s.updated_at)}</td>
        <td class="row-actions"><button type="button" class="link" onClick=${() => edit(s)} aria-label=${'Edit segment ' + s.name}>Edit</button>
          <button type="button" class="link danger" onClick=${() => remove(s)} aria-label=${'Delete segment ' + s.name}>Delete</button></td></tr>`)}</tbody>
    </table></div>`}
    <${Pager} paged=${paged} label="Segments" />
    </section>`;
}

/** How many of a segment's members its page shows at a time. */
const membersPage = 50;

/**
 * A segment's page: its filter in words and who is in it now: the count (exact up
 * to a bound, GET /v1/segments/{id}/subscribers/count) and its members by id, a
 * page at a time (GET /v1/segments/{id}/subscribers).
 * @param {{id:number}} p
 */
export function SegmentPage({ id }) {
  const [seg, error] = useLoad(() => api('GET', '/v1/segments/' + id), [id]);
  const [lists] = useLoad(() => api('GET', '/v1/lists?limit=200'));
  const [campaigns] = useLoad(() => api('GET', '/v1/campaigns?limit=200&order=newest'));
  const [total, totalError] = useLoad(() => api('GET', `/v1/segments/${id}/subscribers/count`), [id]);
  const paged = usePaged(`/v1/segments/${id}/subscribers?limit=${membersPage}`);
  const members = paged.page;
  if (error) return html`<${PageHeader} title=${`Segment ${id}`} /><${ErrorBox} error=${error} /><p><a href="#/segments">All segments</a></p>`;
  if (!seg) return html`<p class="loading">Loading…</p>`;
  return html`<p><a href="#/segments">← Segments</a></p>
    <${PageHeader} title=${seg.name} />
    <dl class="facts">
      <dt>Match</dt><dd>${seg.match ? html`<code>${seg.match}</code>` : 'every subscriber'}</dd>
      <dt>Statuses</dt><dd>${seg.statuses.length ? seg.statuses.join(', ') : 'any'}</dd>
      <dt>Lists</dt><dd>${listNames(seg.list_ids, lists ? lists.data : [])}</dd>
      <dt>Engagement</dt><dd data-engagement>${engagementWords(seg.engagement, campaigns ? campaigns.data : [])}</dd>
      ${seg.created_after && html`<dt>Created after</dt><dd>${when(seg.created_after)}</dd>`}
      ${seg.created_before && html`<dt>Created before</dt><dd>${when(seg.created_before)}</dd>`}
      <dt>Updated</dt><dd>${when(seg.updated_at)}</dd>
    </dl>
    <section aria-labelledby="members"><h2 id="members">Members</h2>
      <${ErrorBox} error=${totalError || paged.error} />
      ${total && html`<p role="status" data-members=${total.count} data-exact=${String(total.exact)}>${total.exact
        ? plural(total.count, 'subscriber matches', 'subscribers match') + ' now, oldest first.'
        : `More than ${num(total.count)} subscribers match now (counted up to ${num(total.count)}; not counted further), oldest first.`}</p>`}
      ${members && members.data.length > 0 && html`<div class="table-wrap"><table class="segment-members">
        <caption class="sr-only">Members of ${seg.name}, page ${paged.number}</caption>
        <thead><tr><th scope="col">Address</th><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Attributes</th><th scope="col">Created</th></tr></thead>
        <tbody>${members.data.map((/** @type {any} */ s) => html`<tr key=${s.id}><td><a href=${'#/subscribers/' + s.id}>${s.email}</a></td><td>${s.name}</td>
          <td>${s.status}</td><td><code>${JSON.stringify(s.attributes)}</code></td><td>${when(s.created_at)}</td></tr>`)}</tbody>
      </table></div>`}
      <${Pager} paged=${paged} label="Members" />
    </section>`;
}
