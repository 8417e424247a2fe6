// Event endpoints: receivers of the account's events, signed with a whsec_ secret
// that is shown once (at creation and at each rotation). An endpoint's page has its
// delivery log (newest first), redelivery of one delivery or of everything since a
// time, a ping, enable/disable and rotation.
import { html, useState, useEffect } from './preact-htm.js';
import { api } from './api.js';
import { Field, ErrorBox, Empty, fieldError, useLoad, when, go, PageHeader, toast } from './ui.js';
import { usePaged, Pager } from './pager.js';

/** The catalogue of docs/events.md, in its order. */
const eventTypes = ['campaign.approved', 'campaign.started', 'campaign.paused', 'campaign.resumed', 'campaign.cancelled',
  'campaign.sent', 'campaign.failed', 'send.sent', 'send.failed', 'send.unknown', 'send.suppressed',
  'subscriber.unsubscribed', 'subscriber.bounced', 'subscriber.complained', 'subscriber.created', 'subscriber.confirmed',
  'subscriber.subscribed', 'suppression.created', 'suppression.deleted', 'endpoint.disabled'];

/** @param {{secret:string, what:string, expires?:string}} p */
function SecretNote({ secret, what, expires }) {
  return html`<div class="notice" role="status" data-secret>
    <strong>${what}: copy the signing secret now, it is not shown again.</strong>
    <code>${secret}</code>
    ${expires && html`<span>The previous secret keeps signing beside it until ${when(expires)}.</span>`}
  </div>`;
}

/** @param {{endpoint?:any, onSaved:(e:any)=>void}} p */
function EndpointForm({ endpoint, onSaved }) {
  const editing = !!endpoint;
  const [url, setURL] = useState(endpoint ? endpoint.url : '');
  const [description, setDescription] = useState(endpoint ? endpoint.description : '');
  const [types, setTypes] = useState(/** @type {string[]} */ (endpoint ? endpoint.event_types : []));
  const [batch, setBatch] = useState(endpoint ? String(endpoint.batch_size) : '1');
  const [error, setError] = useState(/** @type {any} */ (null));
  const submit = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    try {
      const body = { url: url.trim(), description, event_types: types, batch_size: Number(batch || 1) };
      onSaved(await api(editing ? 'PATCH' : 'POST', editing ? '/v1/event-endpoints/' + endpoint.id : '/v1/event-endpoints', body));
      if (!editing) { setURL(''); setDescription(''); setTypes([]); setBatch('1'); }
    } catch (err) { setError(err); }
  };
  const typeError = fieldError(error, '/event_types') || Object.entries(error && error.fields || {}).filter(([k]) => k.startsWith('/event_types/')).map(([, v]) => v)[0];
  return html`<form onSubmit=${submit} class="form" aria-label=${editing ? 'Change the endpoint' : 'New endpoint'}>
    <${Field} label="URL" type="url" value=${url} onInput=${setURL} required error=${fieldError(error, '/url')}
      hint="Events are POSTed here, signed (Standard Webhooks headers)." />
    <${Field} label="Description" value=${description} onInput=${setDescription} error=${fieldError(error, '/description')} />
    <fieldset><legend>Event types (none checked: every type)</legend>
      ${eventTypes.map((t) => html`<label class="check" key=${t}><input type="checkbox" checked=${types.includes(t)}
        onChange=${(/** @type {any} */ e) => setTypes(e.currentTarget.checked ? [...types, t] : types.filter((x) => x !== t))} /> ${t}</label>`)}
      ${typeError && html`<p class="field-error">${typeError}</p>`}
    </fieldset>
    <${Field} label="Batch size" type="number" value=${batch} onInput=${setBatch} error=${fieldError(error, '/batch_size')}
      hint="Above 1, send.* events are posted as event.batch envelopes of up to this many." />
    <${ErrorBox} error=${error} />
    <button type="submit" class="primary">${editing ? 'Save changes' : 'Create endpoint'}</button>
  </form>`;
}

export function EventEndpoints() {
  const paged = usePaged('/v1/event-endpoints?limit=50');
  const { page, error, reload } = paged;
  const [created, setCreated] = useState(/** @type {any} */ (null));
  return html`<${PageHeader} title="Event endpoints" />
    <p>Your servers that receive the account's events (sends, opt-outs, bounces, campaign changes) as signed POSTs.</p>
    <${ErrorBox} error=${error} />
    ${page && page.data.length === 0 && html`<${Empty} title="No event endpoints yet."><p>Add your receiver's URL below; then ping it from its page to check the signature on your side.</p></${Empty}>`}
    ${page && page.data.length > 0 && html`<div class="table-wrap"><table>
      <caption class="sr-only">Event endpoints</caption>
      <thead><tr><th scope="col">URL</th><th scope="col">Types</th><th scope="col">State</th><th scope="col">Created</th></tr></thead>
      <tbody>${page.data.map((/** @type {any} */ e) => html`<tr key=${e.id}>
        <td><a href=${'#/endpoints/' + e.id}>${e.url}</a>${e.description && html`<br /><small>${e.description}</small>`}</td>
        <td>${e.event_types.length ? e.event_types.join(', ') : 'every type'}</td>
        <td>${e.enabled ? (e.failing_since ? html`<span class="tag failed">failing since ${when(e.failing_since)}</span>` : 'enabled')
          : html`<span class="tag paused">disabled</span> ${e.disabled_reason || ''}`}</td>
        <td>${when(e.created_at)}</td></tr>`)}</tbody>
    </table></div>`}
    <${Pager} paged=${paged} label="Endpoints" />
    <h2>New endpoint</h2>
    ${created && html`<${SecretNote} secret=${created.secret} what=${'Created ' + created.url} />
      <p><a href=${'#/endpoints/' + created.id}>Open the new endpoint</a> to ping it and see its deliveries.</p>`}
    <${EndpointForm} onSaved=${(/** @type {any} */ e) => { setCreated(e); reload(); }} />`;
}

/** @param {{endpoint:any}} p */
function Deliveries({ endpoint }) {
  const paged = usePaged(`/v1/event-endpoints/${endpoint.id}/deliveries?limit=50`);
  const { page, error, reload } = paged;
  const [note, setNote] = useState('');
  const [actionError, setActionError] = useState(/** @type {any} */ (null));
  const [since, setSince] = useState('');
  // Deliveries are not on the event stream: while one is on its way the log is
  // asked again every two seconds, and no longer once all have settled.
  const inFlight = !!page && page.data.some((/** @type {any} */ d) => d.status === 'pending' || d.status === 'delivering');
  useEffect(() => {
    if (!inFlight) return;
    const t = setTimeout(reload, 2000);
    return () => clearTimeout(t);
  }, [page, inFlight]);
  const redeliver = async (/** @type {any} */ d) => {
    setActionError(null);
    setNote('');
    try {
      for (const id of d.event_ids) await api('POST', `/v1/event-endpoints/${endpoint.id}/redeliver`, { event_id: id });
      setNote(`Queued again: ${d.event_ids.join(', ')}.`);
      reload();
    } catch (err) { setActionError(err); }
  };
  const redeliverSince = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setActionError(null);
    setNote('');
    const t = new Date(since);
    if (!since || isNaN(t.getTime())) { setActionError({ message: 'Choose a date and time.' }); return; }
    try {
      const r = await api('POST', `/v1/event-endpoints/${endpoint.id}/redeliver`, { since: t.toISOString() });
      setNote(r.queued ? `Every event since ${t.toLocaleString()} is queued again.` : `No event since ${t.toLocaleString()}.`);
      reload();
    } catch (err) { setActionError(err); }
  };
  return html`<section aria-labelledby="deliveries"><h2 id="deliveries">Deliveries</h2>
    <div class="actions"><button type="button" data-reads onClick=${reload}>Refresh deliveries</button></div>
    <form class="inline" onSubmit=${redeliverSince} aria-label="Redeliver since a time">
      <${Field} label="Redeliver every event since" type="datetime-local" value=${since} onInput=${setSince} error=${fieldError(actionError, '/since')} />
      <button type="submit">Redeliver since</button>
    </form>
    ${note && html`<p role="status">${note}</p>`}
    <${ErrorBox} error=${actionError} />
    <${ErrorBox} error=${error} />
    ${page && page.data.length === 0 && html`<${Empty} title="Nothing delivered yet."><p>Ping the endpoint above, or wait for the next event of a type it receives.</p></${Empty}>`}
    ${page && page.data.length > 0 && html`<div class="table-wrap"><table class="deliveries">
      <caption class="sr-only">Deliveries, newest first</caption>
      <thead><tr><th scope="col">Events</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col">Last attempt</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${page.data.map((/** @type {any} */ d) => html`<tr key=${d.id} data-delivery=${d.status}>
        <td><code>${d.event_ids.join(', ')}</code>${d.batch && html` <small>(batch)</small>`}</td>
        <td><span class=${'tag ' + (d.status === 'delivered' ? 'sent' : d.status)}>${d.status}</span>
          ${d.next_attempt_at && d.status !== 'delivered' && html`<br /><small>next try ${when(d.next_attempt_at)}</small>`}</td>
        <td>${d.attempts}</td>
        <td>${d.last_status_code ? `HTTP ${d.last_status_code}` : ''}${d.last_latency_ms != null ? ` in ${d.last_latency_ms} ms` : ''}${d.last_error ? html`<br /><small>${d.last_error}</small>` : ''}</td>
        <td>${when(d.last_attempt_at)}</td>
        <td><button type="button" class="link" onClick=${() => redeliver(d)} aria-label=${'Redeliver ' + d.event_ids.join(', ')}>Redeliver</button></td></tr>`)}</tbody>
    </table></div>`}
    <${Pager} paged=${paged} label="Deliveries" />
  </section>`;
}

/** @param {{id:number}} p */
export function EndpointPage({ id }) {
  const [ep, error, reload] = useLoad(() => api('GET', '/v1/event-endpoints/' + id), [id]);
  const [secret, setSecret] = useState(/** @type {any} */ (null));
  const [grace, setGrace] = useState('86400');
  const [note, setNote] = useState('');
  const [actionError, setActionError] = useState(/** @type {any} */ (null));
  const [tick, setTick] = useState(0);
  const act = async (/** @type {()=>Promise<any>} */ fn) => {
    setActionError(null);
    setNote('');
    try { await fn(); } catch (err) { setActionError(err); }
  };
  if (error) return html`<${PageHeader} title=${`Endpoint ${id}`} /><${ErrorBox} error=${error} /><p><a href="#/endpoints">All endpoints</a></p>`;
  if (!ep) return html`<p class="loading">Loading…</p>`;
  return html`<${PageHeader} title=${`Endpoint ${ep.id}`} />
    <p><a href="#/endpoints">All endpoints</a></p>
    <dl class="facts">
      <dt>URL</dt><dd><code>${ep.url}</code></dd>
      <dt>State</dt><dd>${ep.enabled ? (ep.failing_since ? `enabled, failing since ${when(ep.failing_since)}` : 'enabled') : `disabled${ep.disabled_reason ? ': ' + ep.disabled_reason : ''}`}</dd>
      <dt>Types</dt><dd>${ep.event_types.length ? ep.event_types.join(', ') : 'every type'}</dd>
      <dt>Batch size</dt><dd>${ep.batch_size}</dd>
      <dt>Created</dt><dd>${when(ep.created_at)}</dd>
    </dl>
    <div class="actions">
      <button type="button" onClick=${() => act(async () => { const r = await api('POST', `/v1/event-endpoints/${ep.id}/ping`); setNote(`Ping queued as ${r.event_id}; its delivery shows below.`); setTick(tick + 1); })}>Ping</button>
      <button type="button" onClick=${() => act(async () => { await api('PATCH', '/v1/event-endpoints/' + ep.id, { enabled: !ep.enabled }); reload(); })}>${ep.enabled ? 'Disable' : 'Enable'}</button>
      <button type="button" class="danger" onClick=${() => act(async () => {
        if (!confirm(`Delete the endpoint ${ep.url} and its delivery log?`)) return;
        await api('DELETE', '/v1/event-endpoints/' + ep.id);
        go('#/endpoints');
      })}>Delete endpoint</button>
    </div>
    ${note && html`<p role="status">${note}</p>`}
    <${ErrorBox} error=${actionError} />
    <${Deliveries} key=${tick} endpoint=${ep} />
    <h2>Signing secret</h2>
    <p>Rotating makes a new secret; the old one keeps signing beside it for the time you choose, so your receiver can switch over.</p>
    <form class="inline" aria-label="Rotate the secret" onSubmit=${(/** @type {Event} */ e) => { e.preventDefault(); act(async () => {
      setSecret(await api('POST', `/v1/event-endpoints/${ep.id}/rotate`, { grace_seconds: Number(grace || 0) }));
    }); }}>
      <${Field} label="Old secret stays valid for (seconds)" type="number" value=${grace} onInput=${setGrace} error=${fieldError(actionError, '/grace_seconds')} />
      <button type="submit">Rotate secret</button>
    </form>
    ${secret && html`<${SecretNote} secret=${secret.secret} what="Rotated" expires=${secret.previous_secret_expires_at} />`}
    <details><summary>Change the endpoint</summary>
      <${EndpointForm} key=${ep.updated_at} endpoint=${ep} onSaved=${reload} />
    </details>`;
}
