import { html, useState } from './preact-htm.js';
import { api } from './api.js';
import { ErrorBox, Empty, useLoad, when, PageHeader, toast } from './ui.js';

/** The http(s) links of a text part, to follow them from here. @param {string} text */
function links(text) {
  return [...new Set(text.match(/https?:\/\/[^\s<>"')]+/g) || [])];
}

export function Inbox() {
  const [page, error, reload] = useLoad(() => api('GET', '/v1/dev/inbox'));
  const [open, setOpen] = useState(/** @type {number|null} */ (null));
  if (error && error.status === 404) {
    return html`<${PageHeader} title="Dev inbox" /><${Empty} title="There is no dev inbox here.">
      <p>It exists under <code>sendonce dev</code> (<code>make run</code>) with the log provider, and shows the messages that would have been sent.</p></${Empty}>`;
  }
  const m = page && page.data.find((/** @type {any} */ x) => x.id === open);
  return html`<${PageHeader} title="Dev inbox" />
    <p>The last messages the log provider "sent" for this account, kept in memory by <code>sendonce dev</code>. <button type="button" class="link" data-reads onClick=${reload}>Refresh</button></p>
    <${ErrorBox} error=${error} />
    ${page && page.data.length === 0 && html`<${Empty} title="No messages yet."><p>Send a test from a campaign, or approve one, and its messages appear here.</p></${Empty}>`}
    <div class="inbox">
      ${page && page.data.length > 0 && html`<ul class="messages" aria-label="Messages">
        ${page.data.map((/** @type {any} */ x) => html`<li key=${x.id}><button type="button" data-reads class=${'message' + (x.id === open ? ' open' : '')} aria-pressed=${x.id === open ? 'true' : 'false'} onClick=${() => setOpen(x.id)}>
          <strong>${x.subject || '(no subject)'}</strong><span>to ${x.to}</span><small>${when(x.logged_at)}</small></button></li>`)}
      </ul>`}
      ${m && html`<article class="message-view" aria-label="Message">
        <h2>${m.subject}</h2>
        <dl class="headers"><dt>From</dt><dd>${m.from}</dd><dt>To</dt><dd>${m.to}</dd><dt>Message-ID</dt><dd>${m.message_id}</dd>
          ${m.headers.map((/** @type {any} */ h) => html`<dt>${h.name}</dt><dd>${h.value}</dd>`)}</dl>
        ${m.has_html && html`<iframe title=${'HTML of ' + m.subject} sandbox="allow-popups allow-popups-to-escape-sandbox" src=${`/v1/dev/inbox/${m.id}/html`}
          onLoad=${(/** @type {any} */ e) => { e.currentTarget.dataset.loaded = 'yes'; }}></iframe>`}
        ${m.text && html`<h3>Text</h3><pre class="source">${m.text}</pre>`}
        ${links(m.text || '').length > 0 && html`<h3>Links</h3><ul class="plain">${links(m.text).map((l) => html`<li key=${l}><a href=${l} target="_blank" rel="noopener noreferrer">${l}</a></li>`)}</ul>`}
      </article>`}
    </div>`;
}
