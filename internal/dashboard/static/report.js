// A campaign's report (GET /v1/campaigns/{id}/report): what happened to its
// recipients, the feedback it drew, people's engagement apart from scanners,
// rates and the recipient domains — from the kept counters, so it stays right
// after send retention. With it, the recipients' export and, for a sent campaign
// with failed recipients, a retry of those (never of `unknown` ones).
import { html, useState } from './preact-htm.js';
import { api } from './api.js';
import { ErrorBox, useLoad, num, explain, toast } from './ui.js';
import { can } from './perm.js';

/** @param {number|null|undefined} r */
function pct(r) {
  return r === null || r === undefined ? '–' : (r * 100).toFixed(r < 0.01 && r > 0 ? 2 : 1) + ' %';
}

/** @param {{id:number, status:string, progress?:number, onRetried?:()=>void}} p */
export function CampaignReport({ id, status, progress, onRetried }) {
  const [r, error, reload] = useLoad(() => api('GET', `/v1/campaigns/${id}/report`), [id, status, progress]);
  const [busy, setBusy] = useState(false);
  const [retryError, setRetryError] = useState(/** @type {any} */ (null));
  if (error) return html`<section aria-labelledby="report"><h2 id="report">Report</h2><${ErrorBox} error=${error} /></section>`;
  if (!r) return null;
  const retry = async () => {
    if (!confirm(`Send once more to the ${num(r.failed)} failed recipient${r.failed === 1 ? '' : 's'}? `
      + `The ${num(r.unknown)} of unknown outcome are not retried: the provider may have delivered them, and a second send could reach them twice.`)) return;
    setBusy(true);
    setRetryError(null);
    try {
      await api('POST', `/v1/campaigns/${id}/retry-failed`);
      toast('The failed recipients are queued again.');
      if (onRetried) onRetried();
    } catch (err) { setRetryError(err); }
    setBusy(false);
    reload();
  };
  const basis = r.rates.basis === 'delivered' ? 'delivered' : 'sent (the provider reports no deliveries)';
  const facts = [['Audience', r.audience], ['Sent', r.sent], ['Delivered', r.delivered === null ? '–' : r.delivered], ['Failed', r.failed],
    ['Unknown', r.unknown], ['Suppressed', r.suppressed], ['Pending', r.pending], ['Cancelled', r.cancelled]];
  const u = r.feedback.unsubscribes_by_source;
  const rows = [...r.domains, ...(r.other_domains.sent > 0 ? [r.other_domains] : [])];
  return html`<section aria-labelledby="report" data-report><h2 id="report">Report</h2>
    <dl class="facts">${facts.map(([k, v]) => html`<div key=${k}><dt>${k}</dt><dd data-fact=${String(k).toLowerCase()}>${typeof v === 'number' ? num(v) : v}</dd></div>`)}</dl>
    <h3>Feedback</h3>
    <dl class="facts">
      <div><dt>Hard bounces</dt><dd data-fact="hard_bounces">${num(r.feedback.hard_bounces)}</dd></div>
      <div><dt>Soft bounces</dt><dd data-fact="soft_bounces">${num(r.feedback.soft_bounces)}</dd></div>
      <div><dt>Complaints</dt><dd data-fact="complaints">${num(r.feedback.complaints)}</dd></div>
      <div><dt>Unsubscribes</dt><dd data-fact="unsubscribes">${num(r.feedback.unsubscribes)}
        <small> (one-click ${num(u.one_click)}, preferences ${num(u.preferences)}, provider ${num(u.provider)})</small></dd></div>
    </dl>
    <h3>Rates</h3>
    <p>Against ${num(r.rates.denominator)} ${basis}; opens and clicks count people, not suspected scanners.</p>
    <dl class="facts">
      <div><dt>Open</dt><dd data-rate="open">${pct(r.rates.open)}</dd></div>
      <div><dt>Click</dt><dd data-rate="click">${pct(r.rates.click)}</dd></div>
      <div><dt>Click to open</dt><dd>${pct(r.rates.click_to_open)}</dd></div>
      <div><dt>Bounce</dt><dd data-rate="bounce">${pct(r.rates.bounce)}</dd></div>
      <div><dt>Complaint</dt><dd data-rate="complaint">${pct(r.rates.complaint)}</dd></div>
      <div><dt>Unsubscribe</dt><dd data-rate="unsubscribe">${pct(r.rates.unsubscribe)}</dd></div>
    </dl>
    <p>Opens: ${num(r.opens.people_unique)} people (${num(r.opens.scanners)} scanner hits left out) · clicks: ${num(r.clicks.people_unique)} people (${num(r.clicks.scanners)} scanner hits left out).</p>
    ${rows.length > 0 && html`<div class="table-wrap"><table>
      <caption>By recipient domain</caption>
      <thead><tr><th scope="col">Domain</th><th scope="col">Sent</th><th scope="col">Bounced</th><th scope="col">Complained</th>
        <th scope="col">Unsubscribed</th><th scope="col">Opened (people)</th><th scope="col">Clicked (people)</th></tr></thead>
      <tbody>${rows.map((d) => html`<tr key=${d.domain}><th scope="row">${d.domain}</th><td>${num(d.sent)}</td><td>${num(d.bounced)}</td>
        <td>${num(d.complained)}</td><td>${num(d.unsubscribed)}</td><td>${num(d.opened_people)}</td><td>${num(d.clicked_people)}</td></tr>`)}</tbody>
    </table></div>`}
    <p class="actions">
      <a class="button" href=${`/v1/campaigns/${id}/recipients/export?format=csv`} download=${`campaign-${id}-recipients.csv`}>Export recipients (CSV)</a>
      ${status === 'sent' && r.failed > 0 && can('campaigns:approve') && html`<button type="button" disabled=${busy} onClick=${retry}>Retry ${num(r.failed)} failed</button>`}
    </p>
    ${retryError && html`<div class="error" role="alert"><p>${explain(retryError)}</p></div>`}
  </section>`;
}
