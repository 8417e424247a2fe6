// The domain check (POST /v1/domains/check): a From address's or domain's SPF,
// DKIM and DMARC as the API found them, and the records to publish for what
// fails. Fields the page does not know yet are shown as they come, so a field the
// API gains later is never hidden.
import { html, useState } from './preact-htm.js';
import { api } from './api.js';
import { Field, Select, ErrorBox, fieldError, useLoad } from './ui.js';

const known = new Set(['domain', 'ok', 'aligned', 'spf', 'dkim', 'dmarc', 'dmarc_policy', 'publish', 'spf_alignment', 'dkim_alignment']);
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
    </div>`}
  </section>`;
}
