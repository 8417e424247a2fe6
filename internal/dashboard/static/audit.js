// The audit log: who did what, when, newest first, with the API's filters
// (actor, action, target, time range) and its cursor pager; and the short
// "who created / approved" of a campaign page, read from the same log.
import { html, useState } from './preact-htm.js';
import { api } from './api.js';
import { Field, Select, ErrorBox, Empty, useLoad, when } from './ui.js';
import { usePaged, Pager } from './pager.js';
import { can } from './perm.js';

/** @param {any} a an entry's actor */
function actorName(a) {
  if (a.type === 'operator') return 'the operator';
  const kind = a.type === 'user' ? '' : a.type === 'key' ? 'key ' : 'login-link session ';
  return kind + (a.label || '#' + a.id);
}

/** @param {string} local a datetime-local value @returns {string} */
function iso(local) {
  const d = new Date(local);
  return isNaN(d.getTime()) ? '' : d.toISOString();
}

/**
 * @param {{arg?:string}} p arg "campaign:42" opens the log of one target
 * (the campaign page links here so).
 */
export function AuditLog({ arg }) {
  const [preType, preID] = (arg || '').split(':');
  const [actor, setActor] = useState('');
  const [action, setAction] = useState('');
  const [targetType, setTargetType] = useState(preType || '');
  const [targetID, setTargetID] = useState(preID || '');
  const [since, setSince] = useState('');
  const [until, setUntil] = useState('');
  // The filters apply on submit, not on every key typed.
  const [applied, setApplied] = useState(() => query('', '', preType || '', preID || '', '', ''));
  const [people] = useLoad(() => api('GET', '/v1/members').catch(() => ({ members: [] })));
  const paged = usePaged('/v1/audit-log?' + applied);
  const { page, error } = paged;
  const submit = (/** @type {Event} */ e) => {
    e.preventDefault();
    setApplied(query(actor, action, targetType, targetID, since, until));
  };
  const actors = /** @type {Array<[string,string]>} */ ([['', 'anyone'], ['key', 'any API key'], ['session', 'any login-link session'],
    ['operator', 'the operator'],
    ...((people && people.members) || []).map((/** @type {any} */ m) => [`user:${m.user_id}`, m.email])]);
  return html`<h1>Audit log</h1>
    <p>Every change made through the API or this dashboard: who, what, when and from where. Nothing can change it.</p>
    <form role="search" onSubmit=${submit} class="filters" aria-label="Filter the audit log">
      <${Select} label="Actor" value=${actor} onChange=${setActor} options=${actors} />
      <${Field} label="Action" value=${action} onInput=${setAction} placeholder="campaign.approve" />
      <${Field} label="Target type" value=${targetType} onInput=${setTargetType} placeholder="campaign" />
      <${Field} label="Target id" value=${targetID} onInput=${setTargetID} />
      <${Field} label="Since" type="datetime-local" value=${since} onInput=${setSince} />
      <${Field} label="Until" type="datetime-local" value=${until} onInput=${setUntil} />
      <button type="submit">Filter</button>
    </form>
    <${ErrorBox} error=${error} />
    ${page && page.data.length === 0 && html`<${Empty} title="No entries${applied !== 'limit=50' ? ' match these filters' : ' yet'}." />`}
    ${page && page.data.length > 0 && html`<div class="table-wrap"><table class="audit">
      <caption class="sr-only">Audit log, newest first</caption>
      <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">From</th></tr></thead>
      <tbody>${page.data.map((/** @type {any} */ e) => html`<tr key=${e.id} data-audit=${e.action}>
        <td>${when(e.created_at)}</td><td data-actor=${e.actor.label}>${actorName(e.actor)}</td><td><code>${e.action}</code></td>
        <td>${e.target_type}${e.target_id ? ' ' + e.target_id : ''}</td><td><small>${e.source_address}</small></td></tr>`)}
      </tbody></table></div>`}
    <${Pager} paged=${paged} label="Audit log" />`;
}

/**
 * The audit log's query for the filters (always with a limit: the pager adds &cursor=).
 * @param {string} actor @param {string} action @param {string} targetType @param {string} targetID @param {string} since @param {string} until
 */
function query(actor, action, targetType, targetID, since, until) {
  const q = new URLSearchParams({ limit: '50' });
  if (actor) {
    const [type, id] = actor.split(':');
    q.set('actor_type', type);
    if (id) q.set('actor_id', id);
  }
  if (action.trim()) q.set('action', action.trim());
  if (targetType.trim()) q.set('target_type', targetType.trim());
  if (targetID.trim()) q.set('target_id', targetID.trim());
  if (since && iso(since)) q.set('since', iso(since));
  if (until && iso(until)) q.set('until', iso(until));
  return q.toString();
}

/**
 * Who created the campaign and who approved (paused, cancelled…) it, from the
 * audit log; nothing for a session that may not read the log.
 * @param {{id:number, status:string}} p
 */
export function CampaignPeople({ id, status }) {
  const [page] = useLoad(() => (can('audit:read') ? api('GET', `/v1/audit-log?target_type=campaign&target_id=${id}&limit=50`) : Promise.resolve(null)), [id, status]);
  if (!page) return null;
  /** @param {string} action */
  const last = (action) => page.data.find((/** @type {any} */ e) => e.action === action);
  const rows = /** @type {Array<[string,any]>} */ ([['Created by', last('campaign.create')],
    ['Last edited by', last('campaign.update')], ['Approved by', last('campaign.approve')], ['Paused by', last('campaign.pause')],
    ['Cancelled by', last('campaign.cancel')]]).filter(([, e]) => e);
  if (rows.length === 0) return null;
  return html`<dl class="facts people" data-campaign-people>
    ${rows.map(([label, e]) => html`<dt>${label}</dt><dd data-who=${label}>${actorName(e.actor)}, ${when(e.created_at)}</dd>`)}
    <dt>History</dt><dd><a href=${`#/audit/campaign:${id}`}>the audit log of this campaign</a></dd>
  </dl>`;
}
