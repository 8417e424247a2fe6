import { html, useState, useEffect, useRef } from './preact-htm.js';
import { api, subscribe, onStreamOpen, Problem } from './api.js';
import { lintCampaign, LintList } from './lint.js';
import { Field, Select, ErrorBox, Empty, fieldError, useLoad, when, num, go, explain, useId, plural, PageHeader, toast } from './ui.js';
import { usePaged, Pager } from './pager.js';
import { CampaignProgress } from './progress.js';
import { CampaignChart } from './chart.js';
import { Engagement } from './engagement.js';
import { CampaignPeople } from './audit.js';
import { can } from './perm.js';
import { CampaignReport } from './report.js';
import { ABTest } from './ab.js';
import { Builder, BlocksPreview, emptyDesign } from './builder.js';
import { MediaPicker, appendLine } from './mediapicker.js';
import { ViewControls, Rendered, usePreviewView, subscriberData } from './preview.js';

const statuses = ['', 'draft', 'approved', 'building', 'sending', 'paused', 'sent', 'cancelled', 'failed'];

export function Campaigns() {
  const [status, setStatus] = useState('');
  // Newest first, a page at a time: the campaign made last is always on the first page.
  const paged = usePaged('/v1/campaigns?order=newest&limit=50' + (status ? '&status=' + status : ''));
  const { page, error } = paged;
  return html`<${PageHeader} title="Campaigns">${can('campaigns:write') && html`<a class="button primary" href="#/campaigns/new">New campaign</a>`}</${PageHeader}>
    <${Select} label="Status" value=${status} onChange=${setStatus} options=${statuses.map((s) => [s, s || 'any'])} />
    <${ErrorBox} error=${error} />
    ${page && page.data.length === 0 && html`<${Empty} title="No campaigns${status ? ' with this status' : ''}.">
      <p><a href="#/campaigns/new">Create one</a> from a template or from scratch.</p></${Empty}>`}
    ${page && page.data.length > 0 && html`<div class="table-wrap"><table class="campaigns">
      <caption class="sr-only">Campaigns, newest first</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
      <tbody>${page.data.map((/** @type {any} */ c) => html`<tr key=${c.id}>
        <td><a href=${'#/campaigns/' + c.id}>${c.name}</a></td><td><span class=${'tag ' + c.status}>${c.status}</span></td><td>${when(c.created_at)}</td></tr>`)}
      </tbody></table></div>`}
    <${Pager} paged=${paged} label="Campaigns" />`;
}

/**
 * The audience filter of lists and a segment, as the segment preview takes it.
 * @param {number[]} listIds @param {any} seg @param {string[]} statuses
 */
function audienceFilter(listIds, seg, statuses) {
  /** @type {any} */
  const filter = { statuses };
  if (seg) {
    if (seg.match) filter.match = seg.match;
    if (seg.list_ids.length) filter.list_ids = seg.list_ids;
  }
  if (listIds.length) filter.list_ids = listIds;
  return filter;
}

/**
 * The audience of lists and a segment (confirmed, not suppressed: whom a campaign
 * goes to), and who of the lists it leaves out: pending subscribers (not confirmed
 * yet) and unsubscribed ones. The count is exact up to the API's bound (100,000);
 * beyond it `exact` is false and the count is that bound.
 * @param {number[]} listIds @param {any} seg
 * @returns {Promise<{count:number, exact:boolean, pending:number, unsubscribed:number}>}
 */
async function audience(listIds, seg) {
  const statuses = seg && seg.statuses.length ? seg.statuses : ['confirmed'];
  const [count, pending, unsubscribed] = await Promise.all([
    api('POST', '/v1/segments/preview', audienceFilter(listIds, seg, statuses)),
    statuses.includes('pending') ? { count: 0 } : api('POST', '/v1/segments/preview', audienceFilter(listIds, seg, ['pending'])),
    api('POST', '/v1/segments/preview', audienceFilter(listIds, seg, ['unsubscribed'])),
  ]);
  return { count: count.count, exact: count.exact !== false, pending: pending.count, unsubscribed: unsubscribed.count };
}

/** An audience in words: "1 subscriber", "more than 100,000 subscribers". @param {{count:number, exact:boolean}} a */
function audienceWords(a) {
  return a.exact ? plural(a.count, 'subscriber') : `more than ${num(a.count)} subscribers`;
}

/** Why the audience is smaller than the lists. @param {{a:{count:number, exact:boolean, pending:number, unsubscribed:number}|null}} p */
function AudienceNote({ a }) {
  if (!a || (a.pending === 0 && a.unsubscribed === 0)) return null;
  const parts = [];
  if (a.pending) parts.push(`${plural(a.pending, 'subscriber')} ${a.pending === 1 ? 'is' : 'are'} pending (not confirmed yet)`);
  if (a.unsubscribed) parts.push(`${plural(a.unsubscribed, 'subscriber')} unsubscribed`);
  return html`<p class="hint" data-audience-note>Not counted: ${parts.join(', and ')}. A campaign goes only to confirmed subscribers who are not suppressed.
    ${a.pending > 0 && html` Confirm them on their page, or import them again as confirmed if they agreed to receive mail.`}</p>`;
}

/** A campaign's fields in the form, from a campaign (editing) or empty (new). @param {any} c */
function formOf(c) {
  return {
    name: c ? c.name : '', from_email: c ? c.from_email : '', from_name: c ? c.from_name : '', reply_to: c ? c.reply_to : '',
    template_id: c && c.template_id ? String(c.template_id) : '', subject: c ? c.subject : '', html_template: c ? c.html_template : '',
    text_template: c ? c.text_template : '', segment_id: c && c.segment_id ? String(c.segment_id) : '',
    // The route: a sender's id, or "pool:<id>" for a sender pool (one or the other).
    sender_id: c && c.pool_id ? 'pool:' + c.pool_id : c && c.sender_id ? String(c.sender_id) : '', language: c ? c.language : '',
    track_clicks: c ? c.track_clicks : true, track_opens: c ? c.track_opens : false, archive: c ? c.archive : false,
    deliver_at_local: c && c.deliver_at_local ? c.deliver_at_local : '',
    window: !!(c && c.send_window), window_days: c && c.send_window ? c.send_window.days : ['mon', 'tue', 'wed', 'thu', 'fri'],
    window_start: c && c.send_window ? c.send_window.start : '09:00', window_end: c && c.send_window ? c.send_window.end : '17:00',
    window_zone: c && c.send_window && c.send_window.time_zone ? c.send_window.time_zone : '',
    content_type: (c && c.content_type) || 'html', markdown: (c && c.markdown) || '', layout_id: c && c.layout_id ? String(c.layout_id) : '', blocks: (c && c.blocks) || emptyDesign(),
  };
}

const weekDays = [['mon', 'Mon'], ['tue', 'Tue'], ['wed', 'Wed'], ['thu', 'Thu'], ['fri', 'Fri'], ['sat', 'Sat'], ['sun', 'Sun']];

/** A sending window in words, such as "Mon, Tue 09:00–17:00 (Europe/Berlin)". @param {any} w */
export function windowText(w) {
  if (!w) return 'Any time';
  const days = weekDays.filter(([d]) => w.days.includes(d)).map(([, l]) => l).join(', ');
  return `${days} ${w.start}–${w.end}${w.end < w.start ? ' (overnight)' : ''} (${w.time_zone || "the account's time zone"})`;
}

/**
 * Create a campaign, or edit a draft in full (PATCH with every field of the form).
 * @param {{campaign?:any, onSaved?:(c:any)=>void}} p
 */
export function CampaignForm({ campaign, onSaved }) {
  const [templates] = useLoad(() => api('GET', '/v1/templates?limit=200'));
  const [lists] = useLoad(() => api('GET', '/v1/lists?limit=200'));
  const [segments] = useLoad(() => api('GET', '/v1/segments?limit=200'));
  const [senders] = useLoad(() => api('GET', '/v1/senders?limit=200'));
  const [pools] = useLoad(() => api('GET', '/v1/sender-pools?limit=200'));
  const [layouts] = useLoad(() => api('GET', '/v1/layouts?limit=100'));
  const [f, setF] = useState(formOf(campaign));
  const [listIds, setListIds] = useState(/** @type {number[]} */ (campaign ? campaign.list_ids : []));
  const [count, setCount] = useState(/** @type {any} */ (null));
  const [error, setError] = useState(/** @type {any} */ (null));
  // A functional update: several changes in one tick (boxes ticked at once) all land.
  const set = (/** @type {string} */ k) => (/** @type {any} */ v) => setF((old) => ({ ...old, [k]: v }));
  useEffect(() => {
    if (!segments) return;
    let live = true;
    const seg = segments.data.find((/** @type {any} */ s) => s.id === Number(f.segment_id));
    audience(listIds, seg).then((n) => live && setCount(n), () => live && setCount(null));
    return () => { live = false; };
  }, [listIds.join(','), f.segment_id, segments]);
  const submit = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    /** @type {any} */
    const body = { name: f.name, from_email: f.from_email, from_name: f.from_name, reply_to: f.reply_to, list_ids: listIds,
      track_clicks: f.track_clicks, track_opens: f.track_opens, archive: f.archive };
    if (f.language) body.language = f.language;
    if (f.segment_id) body.segment_id = Number(f.segment_id); else if (campaign && campaign.segment_id) body.segment_id = null;
    if (f.sender_id.startsWith('pool:')) body.pool_id = Number(f.sender_id.slice(5));
    else if (f.sender_id) body.sender_id = Number(f.sender_id);
    else {
      if (campaign && campaign.sender_id) body.sender_id = null;
      if (campaign && campaign.pool_id) body.pool_id = null;
    }
    if (f.deliver_at_local) body.deliver_at_local = f.deliver_at_local; else if (campaign && campaign.deliver_at_local) body.deliver_at_local = null;
    if (f.window) {
      body.send_window = { days: weekDays.map(([d]) => d).filter((d) => f.window_days.includes(d)), start: f.window_start, end: f.window_end };
      if (f.window_zone) body.send_window.time_zone = f.window_zone;
    } else if (campaign && campaign.send_window) body.send_window = null;
    if (f.template_id) body.template_id = Number(f.template_id);
    else if (f.content_type === 'markdown' || f.content_type === 'blocks') {
      // html and text are composed from the Markdown or the design in its layout
      // ('': the default one; null clears a layout the draft names).
      body.subject = f.subject;
      body.content_type = f.content_type;
      if (f.content_type === 'markdown') body.markdown = f.markdown; else body.blocks = f.blocks;
      if (f.layout_id) body.layout_id = Number(f.layout_id); else if (campaign && campaign.layout_id) body.layout_id = null;
    } else {
      body.subject = f.subject;
      body.content_type = 'html';
      body.html_template = f.html_template;
      body.text_template = f.text_template;
    }
    try {
      const c = campaign ? await api('PATCH', '/v1/campaigns/' + campaign.id, body) : await api('POST', '/v1/campaigns', body);
      toast(campaign ? 'Draft saved.' : 'Draft created.');
      if (onSaved) onSaved(c); else go('#/campaigns/' + c.id);
    } catch (err) { setError(err); }
  };
  const fromTemplate = !!f.template_id;
  const check = (/** @type {string} */ k, /** @type {string} */ label) => html`<label class="check"><input type="checkbox" checked=${f[k]}
    onChange=${(/** @type {any} */ e) => set(k)(e.currentTarget.checked)} /> ${label}</label>`;
  return html`<form onSubmit=${submit} class="form" aria-label=${campaign ? 'Edit the draft' : 'New campaign'}>
      <${Field} label="Name" value=${f.name} onInput=${set('name')} required error=${fieldError(error, '/name')} />
      <${Field} label="From address" type="email" value=${f.from_email} onInput=${set('from_email')} required error=${fieldError(error, '/from_email')} />
      <${Field} label="From name" value=${f.from_name} onInput=${set('from_name')} error=${fieldError(error, '/from_name')} />
      <${Field} label="Reply-To" type="email" value=${f.reply_to} onInput=${set('reply_to')} error=${fieldError(error, '/reply_to')} hint="Empty: replies go to the From address." />
      <${Select} label="Sender" value=${f.sender_id} onChange=${set('sender_id')} error=${fieldError(error, '/sender_id') || fieldError(error, '/pool_id')}
        options=${[['', "The account's default sender"], ...(senders ? senders.data.map((/** @type {any} */ s) => [String(s.id), s.name]) : []),
          ...(pools ? pools.data.map((/** @type {any} */ p) => ['pool:' + p.id, 'Pool: ' + p.name]) : [])]} />
      <${Select} label="Template" value=${f.template_id} onChange=${set('template_id')} error=${fieldError(error, '/template_id')}
        options=${[['', 'None: write the message here'], ...(templates ? templates.data.map((/** @type {any} */ t) => [String(t.id), t.name]) : [])]} />
      ${!fromTemplate && html`
        <${Field} label="Subject" value=${f.subject} onInput=${set('subject')} error=${fieldError(error, '/subject')} hint="A template: {{.Name}}, {{.Email}}, {{.Attributes.x}}" />
        <${Select} label="Content type" value=${f.content_type} onChange=${set('content_type')} error=${fieldError(error, '/content_type')}
          options=${[['html', 'HTML'], ['markdown', 'Markdown'], ['blocks', 'Blocks (visual builder)']]} />
        ${f.content_type === 'markdown' ? html`
        <${Field} label="Markdown" textarea rows=${8} value=${f.markdown} onInput=${set('markdown')} error=${fieldError(error, '/markdown')}
          hint="CommonMark with tables; template actions such as {{.Name}} work inside." />
        <${MediaPicker} format="markdown" onInsert=${(/** @type {string} */ snip) => set('markdown')(appendLine(f.markdown, snip))} />
        <${Select} label="Layout" value=${f.layout_id} onChange=${set('layout_id')} error=${fieldError(error, '/layout_id')}
          options=${[['', "The account's default layout"], ...(layouts ? layouts.data.map((/** @type {any} */ l) => [String(l.id), l.name + (l.default ? ' (default)' : '')]) : [])]} />` : f.content_type === 'blocks' ? html`<${Builder} design=${f.blocks} onChange=${set('blocks')} error=${error} />
          <${BlocksPreview} subject=${f.subject} design=${f.blocks} />
        <${Select} label="Layout" value=${f.layout_id} onChange=${set('layout_id')} error=${fieldError(error, '/layout_id')}
          options=${[['', "The account's default layout"], ...(layouts ? layouts.data.map((/** @type {any} */ l) => [String(l.id), l.name + (l.default ? ' (default)' : '')]) : [])]} />` : html`
        <${Field} label="HTML" textarea value=${f.html_template} onInput=${set('html_template')} error=${fieldError(error, '/html_template')} />
        <${MediaPicker} format="html" onInsert=${(/** @type {string} */ snip) => set('html_template')(appendLine(f.html_template, snip))} />
        <${Field} label="Text" textarea value=${f.text_template} onInput=${set('text_template')} error=${fieldError(error, '/text_template')} />`}`}
      <${Field} label="Language" value=${f.language} onInput=${set('language')} error=${fieldError(error, '/language')} hint="Of the unsubscribe page and footer: en, fr or de." />
      <${Field} label="Deliver at local time" type="time" value=${f.deliver_at_local} onInput=${set('deliver_at_local')} error=${fieldError(error, '/deliver_at_local')}
        hint="Empty: as soon as it starts. Otherwise each recipient at this time in their zone (attributes.timezone, else the account's time zone), the next occurrence after the start." />
      <fieldset>
        <legend>Sending window</legend>
        ${check('window', 'Send only on these days and hours (quiet hours outside)')}
        ${f.window && html`
          <div class="days" role="group" aria-label="Days">${weekDays.map(([d, l]) => html`<label class="check" key=${d}><input type="checkbox"
            checked=${f.window_days.includes(d)} onChange=${(/** @type {any} */ e) => set('window_days')(e.currentTarget.checked
              ? [...f.window_days, d] : f.window_days.filter((/** @type {string} */ x) => x !== d))} /> ${l}</label>`)}</div>
          ${fieldError(error, '/send_window/days') && html`<p class="field-error">${fieldError(error, '/send_window/days')}</p>`}
          <${Field} label="From" type="time" value=${f.window_start} onInput=${set('window_start')} error=${fieldError(error, '/send_window/start')} />
          <${Field} label="Until" type="time" value=${f.window_end} onInput=${set('window_end')} error=${fieldError(error, '/send_window/end')}
            hint="Before the start: the window runs overnight into the next day." />
          <${Field} label="Time zone" value=${f.window_zone} onInput=${set('window_zone')} error=${fieldError(error, '/send_window/time_zone')}
            hint="An IANA zone such as Europe/Berlin. Empty: the account's time zone." />`}
      </fieldset>
      <fieldset>
        <legend>Tracking and archive</legend>
        ${check('track_clicks', 'Track clicks (links become redirects)')}
        ${check('track_opens', 'Track opens (a pixel; unreliable)')}
        ${check('archive', 'Publish in the web archive')}
      </fieldset>
      <fieldset>
        <legend>Lists</legend>
        ${lists && lists.data.length === 0 && html`<p>No lists yet: the audience is the segment, or every confirmed subscriber.</p>`}
        ${lists && lists.data.map((/** @type {any} */ l) => html`<label class="check" key=${l.id}><input type="checkbox" checked=${listIds.includes(l.id)}
          onChange=${(/** @type {any} */ e) => setListIds(e.currentTarget.checked ? [...listIds, l.id] : listIds.filter((x) => x !== l.id))} /> ${l.name} (${plural(l.member_count, 'member')})</label>`)}
        ${fieldError(error, '/list_ids') && html`<p class="field-error">${fieldError(error, '/list_ids')}</p>`}
      </fieldset>
      <${Select} label="Segment" value=${f.segment_id} onChange=${set('segment_id')} error=${fieldError(error, '/segment_id')}
        options=${[['', 'None'], ...(segments ? segments.data.map((/** @type {any} */ s) => [String(s.id), s.name]) : [])]} />
      <p class="audience" role="status" aria-live="polite">Audience: <strong data-audience=${count ? count.count : ''} data-exact=${count ? String(count.exact) : ''}>${count === null ? '…' : audienceWords(count)}</strong></p>
      <${AudienceNote} a=${count} />
      <${ErrorBox} error=${error} />
      <button type="submit" class="primary">${campaign ? 'Save draft' : 'Create draft'}</button>
    </form>`;
}

export function CampaignNew() {
  return html`<${PageHeader} title="New campaign" /><${CampaignForm} />`;
}

/**
 * The draft's message rendered for the template's sample data or a chosen
 * subscriber, at a desktop or mobile width, light or dark, with its text part.
 * @param {{campaign:any}} p
 */
function Preview({ campaign }) {
  const [email, setEmail] = useState('');
  const [out, setOut] = useState(/** @type {any} */ (null));
  const [error, setError] = useState(/** @type {any} */ (null));
  const [view, setView] = usePreviewView();
  const render = async (/** @type {string} */ as) => {
    /** @type {any} */
    const body = as ? await subscriberData(as) : {};
    if (campaign.template_id) return api('POST', `/v1/templates/${campaign.template_id}/render`, body);
    // The draft's own content (Markdown is stored composed in its layout).
    return api('POST', '/v1/templates/preview', { subject: campaign.subject, html: campaign.html_template, text: campaign.text_template, ...body });
  };
  // Only the latest request's answer is shown: the sample's, still on its way
  // when a subscriber is asked for, must not land after it.
  const latest = useRef(0);
  const show = async (/** @type {string} */ as) => {
    const n = ++latest.current;
    setError(null);
    setOut(null);
    try { const r = await render(as); if (n === latest.current) setOut(r); } catch (err) { if (n === latest.current) setError(err); }
  };
  useEffect(() => { show(''); }, [campaign.updated_at]);
  return html`<section aria-labelledby="preview"><h2 id="preview">Preview</h2>
    <form onSubmit=${(/** @type {Event} */ e) => { e.preventDefault(); show(email); }} class="inline" data-reads aria-label="Preview">
      <${Field} label="As subscriber (address; empty: the sample data)" type="email" value=${email} onInput=${setEmail} />
      <button type="submit">Preview</button>
    </form>
    <${ViewControls} view=${view} onChange=${setView} />
    <${ErrorBox} error=${error} />
    ${out && html`<div class="preview" data-preview="ready"><${Rendered} out=${out} view=${view} title="HTML preview" /></div>`}
  </section>`;
}

/** @param {{id:number}} p */
function TestSend({ id }) {
  const [to, setTo] = useState('');
  const [res, setRes] = useState(/** @type {any} */ (null));
  const [error, setError] = useState(/** @type {any} */ (null));
  const addresses = to.split(',').map((s) => s.trim()).filter(Boolean);
  // A refused address is named by its place in the list: say which one it is.
  /** @type {Record<string,string>} */
  const labels = { '/emails': 'To' };
  addresses.forEach((a, i) => { labels['/emails/' + i] = `To, address ${i + 1} (${a})`; });
  const bad = error instanceof Problem ? Object.keys(error.fields).filter((p) => p.startsWith('/emails')) : [];
  const send = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    try { setRes(await api('POST', `/v1/campaigns/${id}/test`, { emails: addresses })); } catch (err) { setError(err); }
  };
  return html`<section aria-labelledby="test"><h2 id="test">Test send</h2>
    <form onSubmit=${send} class="inline">
      <${Field} label="To (up to 10, comma separated)" value=${to} onInput=${setTo} required
        error=${bad.length ? bad.map((p) => `${labels[p] || p}: ${fieldError(error, p)}`).join('; ') : undefined} />
      <button type="submit">Send test</button>
    </form>
    <${ErrorBox} error=${error} labels=${labels} />
    <div role="status">${res && html`<ul class="plain">${res.results.map((/** @type {any} */ r) => html`<li key=${r.email}>${r.email}: ${r.sent ? 'sent' : 'not sent: ' + r.error}</li>`)}</ul>`}</div>
  </section>`;
}

/**
 * The campaign's sends, searched by address and filtered by status. progress
 * changes as the campaign's counts move: the rows shown are asked again then (at
 * most every two seconds), so they do not stay "queued" after they were sent.
 * @param {{id:number, progress:number}} p
 */
function Sends({ id, progress }) {
  const [status, setStatus] = useState('');
  const [q, setQ] = useState('');
  const [rows, setRows] = useState(/** @type {any[]|null} */ (null));
  const [note, setNote] = useState('');
  const [error, setError] = useState(/** @type {any} */ (null));
  const latest = useRef(0);
  const applied = useRef(''); // the address searched last: a refresh keeps to it
  const search = async (/** @type {Event|null} */ e) => {
    e && e.preventDefault();
    if (e) applied.current = q;
    const mine = ++latest.current; // a slower, older search must not overwrite this one
    setError(null);
    if (e) setNote('Searching…');
    try {
      // The API finds one address (exact, any case) however large the campaign.
      const addr = applied.current.trim();
      const p = await api('GET', `/v1/campaigns/${id}/sends?limit=100` + (status ? '&status=' + status : '') + (addr ? '&email=' + encodeURIComponent(addr) : ''));
      if (mine !== latest.current) return;
      setRows(p.data);
      setNote(addr ? (p.data.length ? `Found ${addr}.` : `No send to ${addr}${status ? ' with status ' + status : ''}.`)
        : `${plural(p.data.length, 'send')} shown${p.next_cursor ? ' (the first 100)' : ''}.`);
    } catch (err) { if (mine === latest.current) { setError(err); setNote(''); } }
  };
  useEffect(() => { search(null); }, [id, status]);
  const lastRefresh = useRef(0);
  useEffect(() => {
    if (progress === 0) return;
    const wait = Math.max(0, lastRefresh.current + 2000 - Date.now());
    const t = setTimeout(() => { lastRefresh.current = Date.now(); search(null); }, wait);
    return () => clearTimeout(t);
  }, [progress]);
  return html`<section aria-labelledby="sends"><h2 id="sends">Sends</h2>
    <form onSubmit=${search} class="inline" data-reads aria-label="Find sends">
      <${Field} label="Address" type="search" value=${q} onInput=${setQ} hint="The whole address, any case" error=${fieldError(error, '/email')} />
      <${Select} label="Status" value=${status} onChange=${setStatus}
        options=${['', 'queued', 'sending', 'sent', 'failed', 'suppressed', 'cancelled', 'unknown'].map((s) => [s, s || 'any'])} />
      <button type="submit">Search</button>
    </form>
    <p role="status">${note}</p>
    <${ErrorBox} error=${error} />
    ${rows && rows.length > 0 && html`<div class="table-wrap"><table class="sends">
      <caption class="sr-only">Sends</caption>
      <thead><tr><th scope="col">Address</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Sent</th><th scope="col">Last error</th></tr></thead>
      <tbody>${rows.map((s) => html`<tr key=${s.id}><td>${s.email}</td><td><span class=${'tag ' + s.status}>${s.status}</span></td><td>${s.attempts}</td><td>${when(s.sent_at)}</td><td>${s.last_error || ''}</td></tr>`)}</tbody>
    </table></div>`}
  </section>`;
}

/** @type {Record<string, Array<[string,string]>>} */
const actions = {
  draft: [['approve', 'Approve and send now']],
  approved: [['unapprove', 'Back to draft'], ['cancel', 'Cancel']],
  sending: [['pause', 'Pause'], ['cancel', 'Cancel']],
  paused: [['resume', 'Resume'], ['cancel', 'Cancel']],
};

/**
 * The campaign's events, newest first: its lifecycle so far (GET
 * /v1/campaigns/{id}/events), then every event of it the stream delivers while the
 * page is open, its sends' outcomes included.
 * @param {{id:number}} p
 */
function CampaignEvents({ id }) {
  const [past, pastError, reloadPast] = useLoad(() => api('GET', `/v1/campaigns/${id}/events`), [id]);
  // A stream that opens after the page loaded starts at that moment: what happened
  // in between (a pause pressed right away) is in neither, so read the history again.
  useEffect(() => onStreamOpen(reloadPast), [id]);
  // Live: every lifecycle event, and the last 10 of its sends' outcomes.
  const [events, setEvents] = useState(/** @type {any[]} */ ([]));
  useEffect(() => subscribe((ev) => {
    if (!ev.data || ev.data.campaign_id !== id) return;
    setEvents((list) => {
      if (list.some((e) => e.id === ev.id)) return list;
      let sends = 0;
      return [ev, ...list].filter((e) => !String(e.type).startsWith('send.') || ++sends <= 10);
    });
  }), [id]);
  const seen = new Set(events.map((e) => e.id));
  const all = [...events, ...(past ? past.data.filter((/** @type {any} */ e) => !seen.has(e.id)) : [])];
  return html`<section aria-labelledby="events"><h2 id="events">Events</h2>
    <${ErrorBox} error=${pastError} />
    ${past && all.length === 0 && html`<p>None yet: the campaign's events (approved, started, paused, sent…) appear here, and its sends' outcomes while the page is open.</p>`}
    ${all.length > 0 && html`<ul class="plain" data-events=${all.length}>
      ${all.map((e) => html`<li key=${e.id} data-event=${e.id}><span class="tag">${e.type}</span> ${e.data.email || ''} <small>${when(e.timestamp)}</small></li>`)}</ul>`}
  </section>`;
}

/**
 * Asks before a campaign is approved, with what will go out: the audience, the
 * subject, From, the sender, the tracking and when. Nothing is sent until
 * "Approve and send" is pressed; Escape or "Keep as draft" changes nothing.
 * @param {{c:any, at:string|null, onClose:()=>void, onDone:()=>void}} p
 */
function ApproveDialog({ c, at, onClose, onDone }) {
  const ref = useRef(/** @type {HTMLDialogElement|null} */ (null));
  const titleId = useId('approve');
  const [facts, error] = useLoad(async () => {
    const [seg, sender] = await Promise.all([
      c.segment_id ? api('GET', '/v1/segments/' + c.segment_id) : null,
      c.sender_id ? api('GET', '/v1/senders/' + c.sender_id) : api('GET', '/v1/senders?limit=200').then((p) => p.data.find((/** @type {any} */ s) => s.is_default) || null),
    ]);
    // The content check advises; a failure of it never holds the approval back.
    const findings = await lintCampaign(c).catch(() => null);
    return { audience: await audience(c.list_ids, seg), sender, explicit: !!c.sender_id, findings };
  }, [c.id]);
  const [busy, setBusy] = useState(false);
  const [approveError, setApproveError] = useState(/** @type {any} */ (null));
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);
  const approve = async () => {
    setBusy(true);
    setApproveError(null);
    try {
      await api('POST', `/v1/campaigns/${c.id}/approve`, at ? { scheduled_for: new Date(at).toISOString() } : {});
      ref.current?.close();
      toast(at ? 'Campaign approved and scheduled.' : 'Campaign approved: it is going out.');
      onDone();
    } catch (err) { setApproveError(err); setBusy(false); }
  };
  const tracking = [c.track_clicks ? 'clicks tracked' : 'clicks not tracked', c.track_opens ? 'opens tracked' : 'opens not tracked'].join(', ');
  const from = c.from_name ? `${c.from_name} <${c.from_email}>` : c.from_email;
  const senderName = !facts ? '…' : facts.sender ? facts.sender.name + (facts.explicit ? '' : " (the account's default)") : "the deployment's provider (the account has no default sender)";
  return html`<dialog ref=${ref} class="confirm" aria-labelledby=${titleId} onClose=${onClose}>
    <h2 id=${titleId}>${at ? 'Schedule' : 'Send'} “${c.name}”?</h2>
    <dl class="facts" data-approve-summary>
      <dt>Audience</dt><dd data-approve-audience=${facts ? facts.audience.count : ''}>${facts ? audienceWords(facts.audience) : '…'}</dd>
      <dt>Subject</dt><dd>${c.template_id ? html`from the template (${c.subject || 'its subject'})` : c.subject}</dd>
      <dt>From</dt><dd>${from}${c.reply_to ? `, replies to ${c.reply_to}` : ''}</dd>
      <dt>Sender</dt><dd>${senderName}</dd>
      <dt>Tracking</dt><dd>${tracking}${c.archive ? '; published in the web archive' : ''}</dd>
      <dt>When</dt><dd>${at ? when(new Date(at).toISOString()) : 'now, as soon as it is approved'}</dd>
      ${c.send_window && html`<dt>Sending window</dt><dd data-approve-window>${windowText(c.send_window)}: outside it the rows wait</dd>`}
    </dl>
    ${facts && html`<${AudienceNote} a=${facts.audience} />`}
    ${facts && html`<${LintList} findings=${facts.findings} />`}
    <${ErrorBox} error=${error || approveError} />
    <div class="actions">
      <button type="button" class="primary" disabled=${busy || !facts} onClick=${approve}>${at ? 'Approve and schedule' : 'Approve and send'}</button>
      <button type="button" class="secondary" onClick=${() => ref.current?.close()}>Keep as draft</button>
    </div>
  </dialog>`;
}

/** @param {{onSchedule:(at:string)=>void}} p */
function Schedule({ onSchedule }) {
  const [at, setAt] = useState('');
  const submit = (/** @type {Event} */ e) => { e.preventDefault(); onSchedule(at); };
  return html`<form onSubmit=${submit} class="inline" aria-label="Schedule">
    <${Field} label="Send at (your local time)" type="datetime-local" value=${at} onInput=${setAt} required />
    <button type="submit" class="secondary">Schedule…</button>
  </form>`;
}

/** @param {{id:number}} p */
export function CampaignPage({ id }) {
  const [c, error, reload] = useLoad(() => api('GET', '/v1/campaigns/' + id), [id]);
  const [actionError, setActionError] = useState(/** @type {any} */ (null));
  const [busy, setBusy] = useState(false);
  const [editing, setEditing] = useState(false);
  // The approval being confirmed: null when none, '' to send now, else the local time.
  const [approving, setApproving] = useState(/** @type {string|null} */ (null));
  // Bumped as the progress moves, so the sends table shows the rows' new states.
  const [progress, setProgress] = useState(0);
  const statusId = useId('status');
  // What this session may do: every action button is an approver's; editing and
  // test sends are an editor's (docs/teams.md).
  const approver = can('campaigns:approve'), editor = can('campaigns:write');
  if (error) return html`<h1>Campaign</h1><${ErrorBox} error=${error} />`;
  if (!c) return html`<p>Loading…</p>`;
  const act = async (/** @type {string} */ a) => {
    if (a === 'approve') { setApproving(''); return; }
    if (a === 'cancel' && !confirm('Cancel this campaign? Recipients not yet sent to will not be.')) return;
    setBusy(true);
    setActionError(null);
    try { await api('POST', `/v1/campaigns/${id}/${a}`); } catch (err) { setActionError(err); }
    setBusy(false);
    reload();
  };
  return html`<p><a href="#/campaigns">← Campaigns</a></p>
    <${PageHeader} title=${c.name}><div class="actions" role="group" aria-labelledby=${statusId}>
      ${(approver ? actions[c.status] || [] : []).map(([a, label], i) => html`<button type="button" key=${a} disabled=${busy} onClick=${() => act(a)}
        class=${a === 'cancel' ? 'danger' : i === 0 && !editing ? 'primary' : ''}>${label}</button>`)}
      ${c.status === 'draft' && !editing && editor && html`<button type="button" class="secondary" onClick=${() => setEditing(true)}>Edit draft</button>`}
    </div></${PageHeader}>
    <p id=${statusId}>Status: <span class=${'tag ' + c.status} data-status=${c.status}>${c.status}</span>
      ${c.paused_reason && html` (${c.paused_reason})`} · created ${when(c.created_at)}</p>
    <${CampaignPeople} id=${id} status=${c.status} />
    ${approving !== null && html`<${ApproveDialog} c=${c} at=${approving || null} onClose=${() => setApproving(null)} onDone=${reload} />`}
    ${c.status === 'draft' && editing && html`<section aria-labelledby="edit"><h2 id="edit">Edit the draft</h2>
      <${CampaignForm} campaign=${c} onSaved=${() => { setEditing(false); reload(); }} />
      <p><button type="button" class="secondary" onClick=${() => setEditing(false)}>Stop editing</button></p></section>`}
    ${c.status === 'draft' && !editing && approver && html`<${Schedule} onSchedule=${(/** @type {string} */ at) => setApproving(at)} />`}
    ${c.scheduled_for && c.status === 'approved' && html`<p>Scheduled for ${when(c.scheduled_for)}.</p>`}
    ${c.deliver_at_local && html`<p data-deliver-at-local>Each recipient gets it at ${c.deliver_at_local} in their own time zone (the account's when theirs is not known).</p>`}
    ${c.send_window && html`<p data-send-window>Sends only ${windowText(c.send_window)}.</p>`}
    ${actionError && html`<div class="error" role="alert"><p>${explain(actionError)}</p></div>`}
    ${c.status !== 'draft' && html`<${CampaignProgress} id=${id} onStatus=${(/** @type {string} */ s) => s !== c.status && reload()} onStats=${() => setProgress((n) => n + 1)} />`}
    ${c.status === 'draft' && !editing && html`<${Preview} campaign=${c} />${editor && html`<${TestSend} id=${id} />`}`}
    ${!editing && html`<${ABTest} campaign=${c} />`}
    ${c.status !== 'draft' && html`<${CampaignChart} id=${id} />`}
    ${c.status !== 'draft' && html`<${CampaignReport} id=${id} status=${c.status} onRetried=${reload} />`}
    ${c.status !== 'draft' && html`<${Engagement} campaign=${c} />`}
    ${c.status !== 'draft' && html`<${Sends} id=${id} progress=${progress} />`}
    <${CampaignEvents} id=${id} />`;
}
