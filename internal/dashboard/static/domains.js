// The domain check (POST /v1/domains/check): a From address's or domain's SPF,
// DKIM and DMARC as the API found them, and the records to publish for what
// fails. Fields the page does not know yet are shown as they come, so a field the
// API gains later is never hidden.
import { html, useState } from './preact-htm.js';
import { api } from './api.js';
import { Field, Select, ErrorBox, fieldError, useLoad, when, toast } from './ui.js';
import { can } from './perm.js';

const known = new Set(['domain', 'ok', 'aligned', 'spf', 'dkim', 'dmarc', 'dmarc_policy', 'publish', 'spf_alignment', 'dkim_alignment', 'dkim_keys']);
const knownRecord = new Set(['status', 'records', 'selector', 'detail']);

/** A value of a field the page does not know, in words. @param {any} v @returns {any} */
function generic(v) {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (Array.isArray(v)) return v.length ? html`<ul class="plain">${v.map((x) => html`<li>${generic(x)}</li>`)}</ul>` : 'none';
  if (typeof v === 'object') return html`<dl class="facts">${Object.entries(v).map(([k, x]) => html`<dt>${k.replace(/_/g, ' ')}</dt><dd>${generic(x)}</dd>`)}</dl>`;
  return String(v);
}

/** The extra fields of an object, as a definition list. @param {{obj:any, skip:Set<string>}} p */
function Extra({ obj, skip }) {
  const rest = Object.entries(obj || {}).filter(([k]) => !skip.has(k));
  if (!rest.length) return null;
  return html`<dl class="facts extra">${rest.map(([k, v]) => html`<dt>${k.replace(/_/g, ' ')}</dt><dd data-field=${k}>${generic(v)}</dd>`)}</dl>`;
}

/** @param {{name:string, label:string, r:any}} p */
function RecordCheck({ name, label, r }) {
  if (!r) return null;
  return html`<div class="card" data-check=${name} data-status=${r.status}>
    <h3>${label}: <span class=${"tag " + r.status}>${r.status}</span></h3>
    <p>${r.detail}</p>
    ${r.selector && html`<p>Selector: <code>${r.selector}</code></p>`}
    ${(r.records || []).length > 0 && html`<p>Found:</p><ul class="plain">${r.records.map((/** @type {string} */ x) => html`<li><code class="url">${x}</code></li>`)}</ul>`}
    <${Extra} obj=${r} skip=${knownRecord} />
  </div>`;
}

export function DomainCheck() {
  const [senders] = useLoad(() => api('GET', '/v1/senders?limit=200'));
  const [domain, setDomain] = useState('');
  const [selector, setSelector] = useState('');
  const [senderId, setSenderId] = useState('');
  const [res, setRes] = useState(/** @type {any} */ (null));
  const [error, setError] = useState(/** @type {any} */ (null));
  const [busy, setBusy] = useState(false);
  const [copied, setCopied] = useState('');
  const copy = async (/** @type {string} */ text, /** @type {string} */ what) => {
    try { await navigator.clipboard.writeText(text); setCopied(`Copied ${what}.`); } catch { setCopied(`Select ${what} and copy it.`); }
  };
  const submit = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    setRes(null);
    setBusy(true);
    /** @type {any} */
    const body = { domain: domain.trim() };
    if (selector.trim()) body.dkim_selector = selector.trim();
    if (senderId) body.sender_id = Number(senderId);
    try { setRes(await api('POST', '/v1/domains/check', body)); } catch (err) { setError(err); }
    setBusy(false);
  };
  return html`<section aria-labelledby="domain-check"><h2 id="domain-check">Check a sending domain</h2>
    <p>Gmail and Yahoo require SPF, DKIM and DMARC of bulk senders' From domains. The check looks them up now (nothing is stored) and says what to publish.</p>
    <form onSubmit=${submit} class="inline" aria-label="Check a sending domain">
      <${Field} label="From address or domain" value=${domain} onInput=${setDomain} required error=${fieldError(error, '/domain')} placeholder="news@example.com" />
      <${Field} label="DKIM selector" value=${selector} onInput=${setSelector} error=${fieldError(error, '/dkim_selector')} hint="Optional: the one your provider shows." />
      <${Select} label="Sender" value=${senderId} onChange=${setSenderId} error=${fieldError(error, '/sender_id')}
        options=${[['', 'Any: the usual selectors'], ...(senders ? senders.data.map((/** @type {any} */ s) => /** @type {[string,string]} */ ([String(s.id), `${s.name} (${s.type})`])) : [])]} />
      <button type="submit" disabled=${busy}>Check</button>
    </form>
    ${busy && html`<p role="status">Looking up…</p>`}
    ${error && !fieldError(error, '/domain') && !fieldError(error, '/dkim_selector') && !fieldError(error, '/sender_id') && html`<${ErrorBox} error=${error} />`}
    ${res && html`<div class="domain-result" data-domain=${res.domain} data-ok=${res.ok ? 'yes' : 'no'}>
      <p role="status" class=${res.ok ? 'notice' : 'error'}><strong>${res.domain}:</strong> ${res.ok ? 'SPF, DKIM and DMARC pass, and DKIM is aligned with the domain.' : 'not ready: see what fails below.'}</p>
      <dl class="facts">
        <dt>DMARC can pass</dt><dd data-aligned=${res.aligned ? 'yes' : 'no'}>${res.aligned ? 'yes: SPF or DKIM is aligned with the domain' : 'no: neither SPF nor DKIM is aligned with the domain'}</dd>
        ${res.spf_alignment && html`<dt>SPF alignment</dt><dd data-alignment="spf" data-value=${res.spf_alignment.aligned ? 'yes' : 'no'}>${res.spf_alignment.aligned ? 'aligned' : 'not aligned'} (${res.spf_alignment.mode}): ${res.spf_alignment.detail}</dd>`}
        ${res.dkim_alignment && html`<dt>DKIM alignment</dt><dd data-alignment="dkim" data-value=${res.dkim_alignment.aligned ? 'yes' : 'no'}>${res.dkim_alignment.aligned ? 'aligned' : 'not aligned'} (${res.dkim_alignment.mode}): ${res.dkim_alignment.detail}</dd>`}
        <dt>DMARC policy</dt><dd>${res.dmarc_policy || 'none'}</dd>
      </dl>
      <div class="checks">
        <${RecordCheck} name="spf" label="SPF" r=${res.spf} />
        <${RecordCheck} name="dkim" label="DKIM" r=${res.dkim} />
        <${RecordCheck} name="dmarc" label="DMARC" r=${res.dmarc} />
      </div>
      <${Extra} obj=${res} skip=${known} />
      ${(res.publish || []).length > 0 && html`<h3>Publish</h3><div class="table-wrap"><table class="publish">
        <caption class="sr-only">Records to publish</caption>
        <thead><tr><th scope="col">Type</th><th scope="col">Name</th><th scope="col">Value</th><th scope="col">Why</th></tr></thead>
        <tbody>${res.publish.map((/** @type {any} */ p, /** @type {number} */ i) => html`<tr key=${i}><td>${p.type}</td>
          <td><code class="url">${p.name}</code> <button type="button" class="link" data-reads onClick=${() => copy(p.name, `the name of record ${i + 1}`)} aria-label=${`Copy the name of record ${i + 1}`}>Copy</button></td>
          <td><code class="url">${p.value}</code> <button type="button" class="link" data-reads onClick=${() => copy(p.value, `the value of record ${i + 1}`)} aria-label=${`Copy the value of record ${i + 1}`}>Copy</button></td>
          <td>${p.why}</td></tr>`)}</tbody>
      </table></div>
      <p role="status">${copied}</p>`}
      <${DkimKeys} domain=${res.domain} checked=${res.dkim_keys || []} key=${res.domain} />
    </div>`}
  </section>`;
}

/**
 * The account's DKIM keys of a checked domain (docs/providers.md, DKIM signing):
 * each with its published status from the check, the TXT record to publish, and
 * (senders:manage) Generate, Activate and Delete.
 * @param {{domain:string, checked:any[]}} p
 */
function DkimKeys({ domain, checked }) {
  const path = `/v1/domains/${encodeURIComponent(domain)}/dkim-keys`;
  const [keys, loadError, reload] = useLoad(() => api('GET', path), [domain]);
  const [algorithm, setAlgorithm] = useState('rsa-2048');
  const [selector, setSelector] = useState('');
  const [error, setError] = useState(/** @type {any} */ (null));
  const [busy, setBusy] = useState(false);
  const [copied, setCopied] = useState('');
  const manage = can('senders:manage');
  const copy = async (/** @type {string} */ text, /** @type {string} */ what) => {
    try { await navigator.clipboard.writeText(text); setCopied(`Copied ${what}.`); } catch { setCopied(`Select ${what} and copy it.`); }
  };
  /** @param {string} method @param {string} sub @param {any} [body] @param {string} [done] */
  const call = async (method, sub, body, done) => {
    setError(null);
    setBusy(true);
    try {
      await api(method, path + sub, body);
      if (done) toast(done);
      reload();
    } catch (err) { setError(err); }
    setBusy(false);
  };
  const generate = (/** @type {Event} */ e) => {
    e.preventDefault();
    /** @type {any} */
    const body = { algorithm };
    if (selector.trim()) body.selector = selector.trim();
    call('POST', '', body, 'Key generated: publish its TXT record, check the domain again, then activate it.').then(() => setSelector(''));
  };
  const activate = (/** @type {any} */ k) => {
    if (!confirm(`Activate the key ${k.selector}? It signs ${domain}'s mail from SMTP senders within 30 seconds; the record must be published first.`)) return;
    call('POST', `/${k.id}/activate`, undefined, `Key ${k.selector} is active.`);
  };
  const remove = (/** @type {any} */ k) => {
    if (!confirm(`Delete the key ${k.selector}? Keep its record published until mail signed with it has been delivered.`)) return;
    call('DELETE', `/${k.id}`, undefined, `Key ${k.selector} deleted.`);
  };
  /** @type {Record<number, any>} */
  const status = {};
  for (const c of checked) status[c.id] = c;
  const list = keys ? keys.data : [];
  return html`<section aria-labelledby="dkim-keys" class="dkim-keys"><h3 id="dkim-keys">DKIM keys of ${domain}</h3>
    <p>Mail through an SMTP sender is signed with the domain's active key. Publish a key's TXT record, check the domain again, then activate it.</p>
    <${ErrorBox} error=${loadError} />
    ${keys && list.length === 0 && html`<p>No keys for this domain yet.</p>`}
    ${list.length > 0 && html`<div class="table-wrap"><table class="dkim">
      <caption class="sr-only">DKIM keys of ${domain}</caption>
      <thead><tr><th scope="col">Selector</th><th scope="col">Algorithm</th><th scope="col">Active</th><th scope="col">Published</th><th scope="col">TXT record</th>${manage && html`<th scope="col">Actions</th>`}</tr></thead>
      <tbody>${list.map((/** @type {any} */ k) => {
        const s = status[k.id];
        return html`<tr key=${k.id} data-dkim-key=${k.selector} data-active=${k.active ? 'yes' : 'no'} data-published=${s ? s.status : ''}>
          <td><code>${k.selector}</code></td><td>${k.algorithm}</td>
          <td>${k.active ? html`yes${k.activated_at ? html` <small>since ${when(k.activated_at)}</small>` : ''}` : 'no'}</td>
          <td>${s ? html`<span class=${'tag ' + (s.status === 'match' ? 'pass' : s.status)}>${s.status}</span> <small>${s.detail}</small>` : 'not checked: check the domain again'}</td>
          <td class="dkim-record"><p>Name: <code class="url" data-record-name>${k.record.name}</code> <button type="button" class="link" data-reads onClick=${() => copy(k.record.name, `the name of key ${k.selector}`)} aria-label=${`Copy the record name of key ${k.selector}`}>Copy</button></p>
            <p>Value: <code class="url" data-record-value>${k.record.value}</code> <button type="button" class="link" data-reads onClick=${() => copy(k.record.value, `the value of key ${k.selector}`)} aria-label=${`Copy the record value of key ${k.selector}`}>Copy</button></p></td>
          ${manage && html`<td>${!k.active && html`<button type="button" disabled=${busy} onClick=${() => activate(k)} aria-label=${`Activate key ${k.selector}`}>Activate</button>`}
            <button type="button" class="danger" disabled=${busy} onClick=${() => remove(k)} aria-label=${`Delete key ${k.selector}`}>Delete</button></td>`}
        </tr>`;
      })}</tbody>
    </table></div>
    <p role="status">${copied}</p>`}
    ${manage && html`<form onSubmit=${generate} class="inline" aria-label="Generate a DKIM key">
      <${Select} label="Algorithm" value=${algorithm} onChange=${setAlgorithm} error=${fieldError(error, '/algorithm')}
        options=${[['rsa-2048', 'RSA 2048 (verified everywhere)'], ['ed25519', 'Ed25519 (fewer receivers verify it)']]} />
      <${Field} label="Selector" value=${selector} onInput=${setSelector} error=${fieldError(error, '/selector')} hint="Optional: one DNS label; empty: generated." />
      <button type="submit" disabled=${busy}>Generate key</button>
    </form>`}
    <${ErrorBox} error=${error} />
  </section>`;
}
