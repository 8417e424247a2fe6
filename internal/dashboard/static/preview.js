// The message preview of the template editor and the campaign page: the
// rendered HTML in a sandboxed frame at a desktop or a mobile width, light or
// dark, with the text part beside it, for the sample data or a chosen
// subscriber's.
import { html, useState } from './preact-htm.js';
import { api } from './api.js';
import { Field } from './ui.js';

/** The widths a preview takes: a desktop reading pane and a phone. */
export const widths = /** @type {Array<[string, string, number]>} */ ([['desktop', 'Desktop (600 px)', 600], ['mobile', 'Mobile (375 px)', 375]]);

/**
 * The HTML as a mail client in dark mode shows it (Apple Mail, iOS Mail, Outlook
 * on the Mac): the message's own `@media (prefers-color-scheme: dark)` rules
 * apply, and a message without colours of its own is shown light on dark. The
 * frame is sandboxed (no script, no access from this page), so the dark scheme is
 * written into the document rather than emulated.
 * @param {string} src
 */
export function darkHTML(src) {
  const rules = src.replace(/@media\s*\(\s*prefers-color-scheme\s*:\s*dark\s*\)/gi, '@media all');
  const base = '<meta name="color-scheme" content="dark"><style data-preview-dark>:root{color-scheme:dark}'
    + 'html,body{background:#1c1c1e;color:#f2f2f7}a{color:#6cb4ff}</style>';
  const head = rules.match(/<head[^>]*>/i);
  if (head && head.index !== undefined) {
    const at = head.index + head[0].length;
    return rules.slice(0, at) + base + rules.slice(at);
  }
  return base + rules;
}

/**
 * The subscriber whose data a preview uses, by address: their email, name and
 * attributes as /v1/templates/preview and /render take them.
 * @param {string} email
 */
export async function subscriberData(email) {
  const found = await api('GET', '/v1/subscribers?limit=1&email=' + encodeURIComponent(email.toLowerCase()));
  const s = found.data[0];
  if (!s || s.email.toLowerCase() !== email.toLowerCase()) throw new Error(`No subscriber has the address ${email}.`);
  return { email: s.email, name: s.name, data: s.attributes };
}

/**
 * The controls of a preview: width and dark mode.
 * @param {{view:{width:string, dark:boolean}, onChange:(v:{width:string, dark:boolean})=>void}} p
 */
export function ViewControls({ view, onChange }) {
  return html`<fieldset class="preview-view" data-reads>
    <legend>View</legend>
    ${widths.map(([k, label]) => html`<label class="check" key=${k}><input type="radio" name="preview-width" value=${k}
      checked=${view.width === k} onChange=${() => onChange({ ...view, width: k })} /> ${label}</label>`)}
    <label class="check"><input type="checkbox" checked=${view.dark} data-preview-dark-toggle
      onChange=${(/** @type {any} */ e) => onChange({ ...view, dark: e.currentTarget.checked })} /> Dark mode</label>
  </fieldset>`;
}

/**
 * A rendered message (subject, html, text) as the view asks.
 * @param {{out:any, view:{width:string, dark:boolean}, title:string}} p
 */
export function Rendered({ out, view, title }) {
  const w = (widths.find(([k]) => k === view.width) || widths[0])[2];
  return html`<p>Subject: <strong>${out.subject}</strong></p>
    ${out.html && html`<div class="preview-frame" data-width=${view.width} data-dark=${view.dark ? 'yes' : undefined}>
      <iframe title=${title} sandbox="" style=${`width:min(100%, ${w}px)`} srcdoc=${view.dark ? darkHTML(out.html) : out.html}></iframe></div>`}
    <h3>Text part</h3>
    <pre class="source" role="region" tabindex="0" aria-label="Text part">${out.text}</pre>`;
}

/** The view a preview starts with: desktop, light. */
export function usePreviewView() {
  return useState({ width: 'desktop', dark: false });
}

/**
 * The field of the subscriber a preview renders for.
 * @param {{value:string, onInput:(v:string)=>void}} p
 */
export function AsSubscriber({ value, onInput }) {
  return html`<${Field} label="As subscriber (address; empty: the sample data)" type="email" value=${value} onInput=${onInput} />`;
}
