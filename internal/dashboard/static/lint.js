// The content lint (POST /v1/templates/lint): advice on an email's content shown
// before it is approved — never a refusal.
import { html } from './preact-htm.js';
import { api } from './api.js';

/**
 * The findings of a campaign's content (its template's when it has one).
 * @param {any} c a campaign
 * @returns {Promise<any[]>}
 */
export async function lintCampaign(c) {
  let { subject, html_template: body, text_template: text } = c;
  if (c.template_id) {
    const t = await api('GET', '/v1/templates/' + c.template_id);
    subject = t.subject; body = t.html; text = t.text;
  }
  const r = await api('POST', '/v1/templates/lint', { kind: 'campaign', subject: subject || '', html: body || '', text: text || '' });
  return r.findings;
}

const fields = /** @type {Record<string,string>} */ ({ '/subject': 'Subject', '/html': 'HTML', '/text': 'Text' });

/** @param {{findings:any[]|null}} p */
export function LintList({ findings }) {
  if (!findings) return null;
  if (findings.length === 0) return html`<p data-lint="0">The content check found nothing to improve.</p>`;
  return html`<section class="lint" data-lint=${findings.length} aria-labelledby="lint-title">
    <h3 id="lint-title">Before it goes out: ${findings.length === 1 ? 'one thing' : findings.length + ' things'} to look at</h3>
    <ul>${findings.map((/** @type {any} */ f, /** @type {number} */ i) => html`<li key=${i} data-rule=${f.rule}>
      <strong>${f.severity === 'warning' ? 'Warning' : 'Note'} (${fields[f.field] || f.field}):</strong> ${f.message}
      ${f.excerpt && html`<br /><code>${f.excerpt}</code>`}
    </li>`)}</ul>
  </section>`;
}
