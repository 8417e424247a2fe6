// Senders: the account's own providers (SMTP, an HTTP endpoint, or a native API).
// The form asks for the fields the chosen type takes; credentials are write-only
// (the API keeps them encrypted and shows a hint of four characters). A paused
// sender stands out with its reason: new credentials resume it.
import { DomainCheck } from './domains.js';
import { html, useState } from './preact-htm.js';
import { api, Problem } from './api.js';
import { Field, Select, ErrorBox, Empty, fieldError, useLoad, when, go, PageHeader, toast } from './ui.js';
import { usePaged, Pager } from './pager.js';

/**
 * The fields of each type: [group, key, label, input type, options or hint].
 * @type {Record<string, Array<{group:'settings'|'credentials', key:string, label:string, type?:string, options?:Array<[string,string]>, hint?:string, required?:boolean}>>}
 */
const fieldsOf = {
  smtp: [
    { group: 'settings', key: 'host', label: 'Host', required: true },
    { group: 'settings', key: 'port', label: 'Port', type: 'number', required: true, hint: '587 for STARTTLS, 465 for TLS.' },
    { group: 'settings', key: 'security', label: 'Security', options: [['starttls', 'STARTTLS'], ['tls', 'TLS'], ['none', 'none']] },
    { group: 'settings', key: 'username', label: 'User name' },
    { group: 'credentials', key: 'password', label: 'Password', type: 'password' },
    { group: 'settings', key: 'bounce_domain', label: 'Bounce domain (optional)', hint: 'Each send goes out with the Return-Path bounces+<token>@ this domain; its MX delivers to the bounce mailbox below.' },
    { group: 'settings', key: 'dkim_sign', label: 'DKIM signing', type: 'boolean',
      options: [['', "Sign with the From domain's active DKIM key"], ['false', 'Do not sign (the relay signs)']] },
  ],
  http: [
    { group: 'settings', key: 'url', label: 'URL', type: 'url', required: true, hint: 'Each message is POSTed here as JSON, with our job id to deduplicate on.' },
    { group: 'credentials', key: 'authorization', label: 'Authorization header', type: 'password', hint: 'Sent as the Authorization header, e.g. Bearer …' },
  ],
  resend: [
    { group: 'credentials', key: 'api_key', label: 'API key', type: 'password', required: true },
    { group: 'settings', key: 'endpoint', label: 'API origin (optional)', type: 'url', hint: 'Replaces the origin of the Resend API (api.resend.com), e.g. for a proxy.' },
  ],
  postmark: [
    { group: 'credentials', key: 'server_token', label: 'Server token', type: 'password', required: true },
    { group: 'settings', key: 'message_stream', label: 'Message stream', hint: 'Default: outbound.' },
    { group: 'settings', key: 'endpoint', label: 'API origin (optional)', type: 'url' },
  ],
  sendgrid: [
    { group: 'credentials', key: 'api_key', label: 'API key', type: 'password', required: true, hint: 'Needs the mail.send scope.' },
    { group: 'settings', key: 'region', label: 'Region', options: [['', 'global'], ['eu', 'eu']] },
    { group: 'settings', key: 'endpoint', label: 'API origin (optional)', type: 'url' },
  ],
  mailgun: [
    { group: 'settings', key: 'domain', label: 'Sending domain', required: true },
    { group: 'credentials', key: 'api_key', label: 'API key', type: 'password', required: true },
    { group: 'settings', key: 'region', label: 'Region', options: [['', 'us'], ['eu', 'eu']] },
    { group: 'settings', key: 'endpoint', label: 'API origin (optional)', type: 'url' },
  ],
  ses: [
    { group: 'settings', key: 'region', label: 'AWS region', required: true, hint: 'For example us-east-1.' },
    { group: 'credentials', key: 'access_key_id', label: 'Access key id', type: 'password', required: true },
    { group: 'credentials', key: 'secret_access_key', label: 'Secret access key', type: 'password', required: true },
    { group: 'settings', key: 'configuration_set', label: 'Configuration set (optional)' },
    { group: 'settings', key: 'endpoint', label: 'API origin (optional)', type: 'url' },
  ],
};
const types = Object.keys(fieldsOf);

// The built-in warm-up curve (internal/pacing Presets): daily caps from the start day.
/** @type {Record<string, number[]>} */
const warmupPresets = {
  standard: [50, 100, 200, 400, 750, 1000, 1500, 2000, 3000, 5000, 7500, 10000, 15000, 20000, 30000, 40000,
    50000, 75000, 100000, 150000, 200000, 300000, 400000, 500000],
};

/** @param {any[]} limits */
const limitsText = (limits) => (limits || []).map((l) => `${l.group || l.domain}=${l.per_second}`).join(', ');

/** @param {any} w */
const warmupText = (w) => (w ? `${w.preset || (w.caps || []).join(',')}@${w.start}` : '');

const groups = ['gmail', 'microsoft', 'yahoo', 'apple', 'gmx'];

/** Reads "gmail=5, example.org=1" into domain_limits; null when a part does not parse.
 * @param {string} text */
function parseLimits(text) {
  const out = [];
  for (const part of text.split(/[\s,]+/).filter(Boolean)) {
    const [key, num] = part.split('=');
    if (!key || num === undefined || num === '' || isNaN(Number(num))) return null;
    out.push(groups.includes(key) ? { group: key, per_second: Number(num) } : { domain: key, per_second: Number(num) });
  }
  return out;
}

/** Reads "standard@2026-12-01" or "50,100,200@2026-12-01"; null when it does not parse.
 * @param {string} text */
function parseWarmup(text) {
  const [plan, start] = text.trim().split('@');
  if (!plan || !start) return null;
  if (/^[0-9]/.test(plan)) return { caps: plan.split(',').map((c) => Number(c.trim())), start };
  return { preset: plan, start };
}

/** The warm-up plan and today's use.
 * @param {{s:any}} p */
function WarmupPlan({ s }) {
  const w = s.warmup;
  if (!w) return html`none`;
  const caps = w.preset ? warmupPresets[w.preset] || [] : w.caps || [];
  const t = s.warmup_today;
  const shown = caps.slice(0, 14);
  return html`<div data-warmup>
    ${t && (t.cap === null
      ? html`<p>The schedule (from ${w.start}) is over: no daily cap. ${t.used} sent today.</p>`
      : html`<p><strong>Day ${t.day_number + 1} of ${caps.length}</strong> (UTC ${t.day}): ${t.used} of today's cap of ${t.cap} used${t.used >= t.cap ? '; the rest waits for tomorrow' : ''}.</p>
        <progress max=${t.cap} value=${Math.min(t.used, t.cap)} aria-label="Today's warm-up cap used">${t.used} of ${t.cap}</progress>`)}
    <ol class="warmup-plan" aria-label="Daily caps from ${w.start}">
      ${shown.map((c, i) => html`<li key=${i} class=${t && t.day_number === i ? 'today' : ''} aria-current=${t && t.day_number === i ? 'date' : undefined}>${c}</li>`)}
      ${caps.length > shown.length && html`<li>… ${caps[caps.length - 1]} (day ${caps.length})</li>`}
    </ol>
  </div>`;
}

/** @param {{sender?:any, onSaved:(s:any)=>void}} p */
function SenderForm({ sender, onSaved }) {
  const editing = !!sender;
  const [type, setType] = useState(sender ? sender.type : 'smtp');
  const [name, setName] = useState(sender ? sender.name : '');
  const [values, setValues] = useState(/** @type {Record<string,string>} */ (sender
    ? Object.fromEntries(Object.entries(sender.settings || {}).filter(([k, v]) => !(k === 'dkim_sign' && v === true))
      .map(([k, v]) => ['settings.' + k, String(v)])) : { 'settings.security': 'starttls' }));
  const [rate, setRate] = useState(sender ? String(sender.rate_per_second) : '0');
  const [conns, setConns] = useState(sender ? String(sender.max_connections) : '0');
  const [allowed, setAllowed] = useState(sender ? sender.allowed_from.join(', ') : '');
  const [isDefault, setDefault] = useState(sender ? sender.default : false);
  const [limits, setLimits] = useState(sender ? limitsText(sender.domain_limits) : '');
  const [warm, setWarm] = useState(sender ? warmupText(sender.warmup) : '');
  const [error, setError] = useState(/** @type {any} */ (null));
  const [busy, setBusy] = useState(false);
  const fields = fieldsOf[type] || [];
  const set = (/** @type {string} */ k) => (/** @type {string} */ v) => setValues({ ...values, [k]: v });
  const submit = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    /** @type {Record<string,any>} */
    const settings = {};
    /** @type {Record<string,string>} */
    const credentials = {};
    for (const f of fields) {
      const v = (values[f.group + '.' + f.key] || '').trim();
      if (!v) continue;
      if (f.group === 'settings') settings[f.key] = f.type === 'number' ? Number(v) : f.type === 'boolean' ? v === 'true' : v;
      else credentials[f.key] = v;
    }
    /** @type {Record<string,any>} */
    const body = {
      name, settings, rate_per_second: Number(rate || 0), max_connections: Number(conns || 0),
      allowed_from: allowed.split(/[\s,]+/).filter(Boolean), default: isDefault,
    };
    // Editing, an empty credentials part keeps the stored ones; creating, the
    // types that need none (smtp without AUTH, http without a header) send none.
    if (Object.keys(credentials).length) body.credentials = credentials;
    const dl = parseLimits(limits);
    if (dl === null) { setError(new Error('Domain limits: write them as gmail=5, example.org=1.')); return; }
    body.domain_limits = dl;
    if (warm.trim()) {
      const w = parseWarmup(warm);
      if (w === null) { setError(new Error('Warm-up: write it as standard@YYYY-MM-DD or 50,100,200@YYYY-MM-DD.')); return; }
      body.warmup = w;
    } else if (editing && sender.warmup) body.clear_warmup = true;
    if (!editing) body.type = type;
    setBusy(true);
    try {
      const s = await api(editing ? 'PATCH' : 'POST', editing ? '/v1/senders/' + sender.id : '/v1/senders', body);
      setValues(Object.fromEntries(Object.entries(values).filter(([k]) => !k.startsWith('credentials.'))));
      onSaved(s);
    } catch (err) { setError(err); }
    setBusy(false);
  };
  const credError = fieldError(error, '/credentials');
  return html`<form onSubmit=${submit} class="form" aria-label=${editing ? 'Change the sender' : 'New sender'}>
    <${Field} label="Name" value=${name} onInput=${setName} required error=${fieldError(error, '/name')} />
    ${editing ? html`<p>Type: <strong>${type}</strong></p>`
      : html`<${Select} label="Type" value=${type} onChange=${setType} error=${fieldError(error, '/type')}
          options=${types.map((t) => [t, t])} />`}
    <fieldset><legend>Settings and credentials for ${type}</legend>
      ${editing && html`<p><small>Credentials are never shown${sender.credentials_hint ? ` (the stored one ends ${sender.credentials_hint})` : ''}.
        Leave them empty to keep them; new ones replace them whole${sender.paused_reason ? ' and resume the sender' : ''}.</small></p>`}
      ${fields.map((f) => f.options
        ? html`<${Select} key=${type + f.key} label=${f.label} value=${values[f.group + '.' + f.key] || ''} onChange=${set(f.group + '.' + f.key)}
            options=${f.options} error=${fieldError(error, `/${f.group}/${f.key}`)} />`
        : html`<${Field} key=${type + f.key} label=${f.label} type=${f.type || 'text'} value=${values[f.group + '.' + f.key] || ''}
            onInput=${set(f.group + '.' + f.key)} required=${f.required && (!editing || f.group === 'settings')}
            autocomplete=${f.group === 'credentials' ? 'new-password' : 'off'}
            hint=${f.hint} error=${fieldError(error, `/${f.group}/${f.key}`)} />`)}
      ${credError && html`<p class="field-error" data-pointer="/credentials">${credError}</p>`}
    </fieldset>
    <${Field} label="Rate per second" type="number" value=${rate} onInput=${setRate} hint="0: unlimited." error=${fieldError(error, '/rate_per_second')} />
    <${Field} label="Connections at most" type="number" value=${conns} onInput=${setConns} hint="0: the default (smtp: 4)." error=${fieldError(error, '/max_connections')} />
    <${Field} label="Allowed From addresses or domains" value=${allowed} onInput=${setAllowed}
      hint="Comma separated; empty allows any From." error=${fieldError(error, '/allowed_from') || Object.entries(error && error.fields || {}).filter(([k]) => k.startsWith('/allowed_from/')).map(([, v]) => v)[0]} />
    <${Field} label="Domain limits (per second)" value=${limits} onInput=${setLimits}
      hint="Per recipient domain group, on top of the rate: gmail=5, microsoft=10, example.org=1 (groups: gmail, microsoft, yahoo, apple, gmx). Empty: none."
      error=${fieldError(error, '/domain_limits') || Object.entries(error && error.fields || {}).filter(([k]) => k.startsWith('/domain_limits/')).map(([, v]) => v)[0]} />
    <${Field} label="Warm-up" value=${warm} onInput=${setWarm}
      hint="Daily caps from a start day (UTC): standard@2026-12-01, or your own caps 50,100,200@2026-12-01. Empty: none."
      error=${fieldError(error, '/warmup') || Object.entries(error && error.fields || {}).filter(([k]) => k.startsWith('/warmup/')).map(([, v]) => v)[0]} />
    <label class="check"><input type="checkbox" checked=${isDefault} onChange=${(/** @type {any} */ e) => setDefault(e.currentTarget.checked)} /> The account's default sender</label>
    <${ErrorBox} error=${error} />
    <p><button type="submit" class="primary" disabled=${busy}>${editing ? 'Save changes' : 'Create sender'}</button></p>
  </form>`;
}

/** @param {{s:any}} p */
function PausedNote({ s }) {
  if (!s.paused_reason) return null;
  return html`<p class="paused-note" data-paused>Paused ${when(s.paused_at)}: ${s.paused_reason}</p>`;
}

/**
 * The account's sender pools: each an ordered list of its senders (the primary
 * first). A campaign naming a pool sends through its first usable sender and
 * moves the rows a refusing sender did not take to the next (docs/providers.md).
 * @param {{senders:any[]}} p
 */
function Pools({ senders }) {
  const paged = usePaged('/v1/sender-pools?limit=50');
  const { page, error, reload } = paged;
  const [name, setName] = useState('');
  const [order, setOrder] = useState('');
  const [formError, setFormError] = useState(/** @type {any} */ (null));
  const nameOf = (/** @type {number} */ id) => (senders.find((/** @type {any} */ s) => s.id === id) || { name: `sender ${id}` }).name;
  const create = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setFormError(null);
    const ids = order.split(',').map((x) => x.trim()).filter(Boolean).map((x) => {
      const byName = senders.find((/** @type {any} */ s) => s.name === x);
      return byName ? byName.id : Number(x);
    });
    try {
      await api('POST', '/v1/sender-pools', { name, senders: ids });
      toast('Pool created.');
      setName(''); setOrder('');
      reload();
    } catch (err) { setFormError(err); }
  };
  const remove = async (/** @type {any} */ p) => {
    if (!confirm(`Delete the pool ${p.name}?`)) return;
    try { await api('DELETE', '/v1/sender-pools/' + p.id); reload(); } catch (err) { setFormError(err); }
  };
  return html`<h2 id="pools">Sender pools</h2>
    <p>A pool lists senders in order. A campaign on a pool sends through its first sender that is neither paused nor refusing; what a sender refused before accepting moves to the next one, and a message whose answer was lost never changes sender.</p>
    <${ErrorBox} error=${error} />
    ${page && page.data.length === 0 && html`<p>No pools yet.</p>`}
    ${page && page.data.length > 0 && html`<div class="table-wrap"><table data-pools>
      <caption class="sr-only">Sender pools</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Senders, primary first</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${page.data.map((/** @type {any} */ p) => html`<tr key=${p.id}>
        <td>${p.name}</td><td>${p.senders.map(nameOf).join(' → ')}</td>
        <td><button type="button" class="danger" onClick=${() => remove(p)}>Delete</button></td></tr>`)}</tbody>
    </table></div>`}
    <${Pager} paged=${paged} label="Sender pools" />
    <form onSubmit=${create} class="form" aria-label="New sender pool">
      <${Field} label="Pool name" value=${name} onInput=${setName} required error=${fieldError(formError, '/name')} />
      <${Field} label="Senders in order" value=${order} onInput=${setOrder} required error=${fieldError(formError, '/senders') || fieldError(formError, '/senders/0') || fieldError(formError, '/senders/1')}
        hint="Sender names or ids, separated by commas: the primary first." />
      <${ErrorBox} error=${formError} />
      <p><button type="submit">Create pool</button></p>
    </form>`;
}

export function Senders() {
  const paged = usePaged('/v1/senders?limit=50');
  const { page, error, reload } = paged;
  const [adding, setAdding] = useState(false);
  return html`<${PageHeader} title="Senders" />
    <p>Where mail leaves from. Without a sender the environment's provider is used; a default sender takes the account's mail, and a campaign or message can name another.</p>
    <${ErrorBox} error=${error} />
    ${page && page.data.length === 0 && html`<${Empty} title="No senders yet."><p>The account's mail goes through the environment's provider. Add your own SMTP server, HTTP endpoint or provider account below, then verify it.</p></${Empty}>`}
    ${page && page.data.length > 0 && html`<div class="table-wrap"><table>
      <caption class="sr-only">Senders</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">State</th><th scope="col">Rate</th><th scope="col">Updated</th></tr></thead>
      <tbody>${page.data.map((/** @type {any} */ s) => html`<tr key=${s.id} class=${s.paused_reason ? 'paused' : ''}>
        <td><a href=${'#/senders/' + s.id}>${s.name}</a>${s.default && html` <span class="tag">default</span>`}</td><td>${s.type}</td>
        <td>${s.paused_reason ? html`<span class="tag paused">paused</span> ${s.paused_reason}` : 'active'}</td>
        <td>${s.rate_per_second ? `${s.rate_per_second}/s` : 'unlimited'}</td><td>${when(s.updated_at)}</td></tr>`)}</tbody>
    </table></div>`}
    <${Pager} paged=${paged} label="Senders" />
    ${page && html`<${Pools} senders=${page.data} />`}
    <h2 id="new-sender">New sender</h2>
    ${adding ? html`<${SenderForm} onSaved=${(/** @type {any} */ s) => { reload(); go('#/senders/' + s.id); }} />`
      : html`<button type="button" class="primary" onClick=${() => setAdding(true)}>Add a sender</button>`}
    <${BounceMailbox} />
    <${DomainCheck} />`;
}

/** The account's bounce mailbox: where the Return-Paths of smtp senders with a bounce domain deliver. */
function BounceMailbox() {
  const [m, loadError, reload] = useLoad(() => api('GET', '/v1/bounce-mailbox').catch((err) => {
    if (err instanceof Problem && err.status === 404) return null;
    throw err;
  }), []);
  const [v, setV] = useState(/** @type {Record<string,string>} */ ({ port: '993', security: 'tls' }));
  const [error, setError] = useState(/** @type {any} */ (null));
  const [busy, setBusy] = useState(false);
  const set = (/** @type {string} */ k) => (/** @type {string} */ x) => setV({ ...v, [k]: x });
  const save = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    setBusy(true);
    try {
      await api('PUT', '/v1/bounce-mailbox', { host: (v.host || '').trim(), port: Number(v.port || 0), security: v.security,
        username: (v.username || '').trim(), password: v.password || '', folder: (v.folder || '').trim() || undefined, enabled: true });
      setV({ ...v, password: '' });
      toast('Bounce mailbox saved');
      reload();
    } catch (err) { setError(err); }
    setBusy(false);
  };
  const remove = async () => {
    if (!confirm('Stop reading the bounce mailbox and delete its settings?')) return;
    try { await api('DELETE', '/v1/bounce-mailbox'); reload(); } catch (err) { setError(err); }
  };
  return html`<section aria-labelledby="bounce-mailbox"><h2 id="bounce-mailbox">Bounce mailbox</h2>
    <p>Bounces and complaint reports sent back to the Return-Path of smtp senders with a bounce domain are read from this IMAP mailbox as they arrive (IMAP IDLE; about once a minute where the server does not offer it) and applied like a provider's webhook. Every message read is deleted: use a mailbox for this alone.</p>
    <${ErrorBox} error=${loadError} />
    ${m && html`<dl class="facts" data-bounce-mailbox>
      <dt>Mailbox</dt><dd>${m.username} at ${m.host}:${m.port} (${m.security}), folder ${m.folder}${m.enabled ? '' : ' (not read)'}</dd>
      <dt>Last read</dt><dd>${m.last_poll_at ? when(m.last_poll_at) : 'not yet'}</dd>
      <dt>Reading</dt><dd>${m.mode === 'idle' ? 'as reports arrive (IMAP IDLE)' : m.mode === 'poll' ? 'once a minute (the server does not offer IDLE)' : 'not yet'}</dd>
      ${m.last_error && html`<dt>Last error</dt><dd class="field-error">${m.last_error}</dd>`}
      <dt>Read (30 days)</dt><dd>${Object.keys(m.processed).length ? Object.entries(m.processed).map(([k, n]) => `${k.replace('_', ' ')}: ${n}`).join(', ') : 'nothing yet'}</dd>
    </dl>
    <p><button type="button" class="danger" onClick=${remove}>Delete the bounce mailbox</button></p>`}
    ${m === null && html`<p>No bounce mailbox is set.</p>`}
    <form onSubmit=${save} class="form" aria-label=${m ? 'Change the bounce mailbox' : 'Set the bounce mailbox'}>
      <${Field} label="IMAP host" value=${v.host || ''} onInput=${set('host')} required error=${fieldError(error, '/host')} />
      <${Field} label="Port" type="number" value=${v.port || ''} onInput=${set('port')} required error=${fieldError(error, '/port')} />
      <${Select} label="Security" value=${v.security} onChange=${set('security')} options=${[['tls', 'TLS'], ['starttls', 'STARTTLS'], ['none', 'none']]} />
      <${Field} label="User name" value=${v.username || ''} onInput=${set('username')} required error=${fieldError(error, '/username')} />
      <${Field} label="Password" type="password" autocomplete="new-password" value=${v.password || ''} onInput=${set('password')} required
        hint="Stored encrypted, never shown." error=${fieldError(error, '/password')} />
      <${Field} label="Folder (optional)" value=${v.folder || ''} onInput=${set('folder')} hint="INBOX when empty." error=${fieldError(error, '/folder')} />
      <${ErrorBox} error=${error} />
      <p><button type="submit" class="secondary" disabled=${busy}>${m ? 'Replace the bounce mailbox' : 'Set the bounce mailbox'}</button></p>
    </form>
  </section>`;
}

/** @param {{id:number}} p */
export function SenderPage({ id }) {
  const [s, error, reload] = useLoad(() => api('GET', '/v1/senders/' + id), [id]);
  const [verify, setVerify] = useState(/** @type {any} */ (null));
  const [actionError, setActionError] = useState(/** @type {any} */ (null));
  const [busy, setBusy] = useState('');
  const act = async (/** @type {string} */ what, /** @type {()=>Promise<any>} */ fn) => {
    setActionError(null);
    setBusy(what);
    try { await fn(); } catch (err) { setActionError(err); }
    setBusy('');
  };
  if (error) return html`<${PageHeader} title=${`Sender ${id}`} /><${ErrorBox} error=${error} /><p><a href="#/senders">All senders</a></p>`;
  if (!s) return html`<p class="loading">Loading…</p>`;
  const remove = () => act('delete', async () => {
    if (!confirm(`Delete the sender ${s.name}?`)) return;
    await api('DELETE', '/v1/senders/' + s.id);
    go('#/senders');
  });
  return html`<${PageHeader} title=${s.name} />
    <p><a href="#/senders">All senders</a></p>
    <${PausedNote} s=${s} />
    ${s.paused_reason && html`<p>Its campaigns wait. Fix the cause, then enter the credentials again below: that resumes it.</p>`}
    <dl class="facts">
      <dt>Type</dt><dd>${s.type}${s.idempotent ? ' (deduplicates on our job id: an interrupted send is replayed)' : ''}</dd>
      <dt>Default</dt><dd>${s.default ? 'yes: the account\'s mail leaves through it' : 'no'}</dd>
      <dt>Settings</dt><dd>${Object.keys(s.settings || {}).length ? Object.entries(s.settings).map(([k, v]) => `${k}: ${v}`).join(', ') : 'none'}</dd>
      <dt>Credentials</dt><dd>${s.credentials_hint ? `stored, ending ${s.credentials_hint}` : 'none'}</dd>
      <dt>Rate</dt><dd>${s.rate_per_second ? `${s.rate_per_second} per second` : 'unlimited'}, ${s.max_connections ? `${s.max_connections} connections at most` : 'the default connections'}</dd>
      <dt>Allowed From</dt><dd>${s.allowed_from.length ? s.allowed_from.join(', ') : 'any'}</dd>
      <dt>Domain limits</dt><dd data-domain-limits>${s.domain_limits.length ? s.domain_limits.map((/** @type {any} */ l) => `${l.group || l.domain}: ${l.per_second} per second`).join(', ') : 'none (a domain that defers is slowed down all the same)'}</dd>
      <dt>Warm-up</dt><dd><${WarmupPlan} s=${s} /></dd>
      <dt>Created</dt><dd>${when(s.created_at)}</dd>
    </dl>
    <div class="actions">
      <button type="button" disabled=${!!busy} onClick=${() => act('verify', async () => { setVerify(null); setVerify(await api('POST', `/v1/senders/${s.id}/verify`)); })}>Verify credentials</button>
      ${!s.default && html`<button type="button" disabled=${!!busy} onClick=${() => act('default', async () => { await api('PATCH', '/v1/senders/' + s.id, { default: true }); reload(); })}>Make default</button>`}
      <button type="button" class="danger" disabled=${!!busy} onClick=${remove}>Delete sender</button>
    </div>
    ${busy === 'verify' && html`<p role="status">Checking…</p>`}
    ${verify && s.type === 'http' && !verify.ok && html`<div class="notice" role="status" data-verify="unverifiable">
      <p><strong>An http sender cannot be verified:</strong> it has no call that checks credentials without sending. Send a message through it and look at its status on the Messages page.</p>
    </div>`}
    ${verify && !(s.type === 'http' && !verify.ok) && html`<div class=${verify.ok ? 'notice' : 'error'} role="status" data-verify=${verify.ok ? 'ok' : 'failed'} data-step=${verify.step || ''}>
      ${verify.ok ? html`<p><strong>Verified:</strong> ${verify.message}</p>`
        : html`<p><strong>Verification failed at the ${verify.step} step:</strong> ${verify.message}</p>`}
    </div>`}
    <${ErrorBox} error=${actionError} />
    <h2>Change</h2>
    <${SenderForm} key=${s.updated_at} sender=${s} onSaved=${() => { setVerify(null); reload(); }} />`;
}
