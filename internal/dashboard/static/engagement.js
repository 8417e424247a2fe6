// A campaign's engagement, when it tracks clicks or opens: its totals (GET
// /v1/campaigns/{id}/stats, `engagement`) and the clicks per link (GET
// /v1/campaigns/{id}/clicks), each split into people and suspected bots. Hits
// are written a second or two after they happen, so the counts are asked again
// on a button, not on a timer.
import { html } from './preact-htm.js';
import { api } from './api.js';
import { ErrorBox, useLoad, num } from './ui.js';

/** @param {{label:string, total:number, unique:number, human:number, uniqueHuman:number, kind:string}} p */
function Row({ label, total, unique, human, uniqueHuman, kind }) {
  return html`<tr data-kind=${kind}>
    <th scope="row">${label}</th>
    <td data-total=${total}>${num(total)}</td><td data-unique=${unique}>${num(unique)}</td>
    <td data-human=${human}>${num(human)}</td><td data-unique-human=${uniqueHuman}>${num(uniqueHuman)}</td>
    <td data-bots=${total - human}>${num(total - human)}</td></tr>`;
}

/** @param {{campaign:any}} p */
export function Engagement({ campaign }) {
  const id = campaign.id;
  const [stats, statsError, reloadStats] = useLoad(() => api('GET', `/v1/campaigns/${id}/stats`), [id]);
  const [clicks, clicksError, reloadClicks] = useLoad(() => (campaign.track_clicks ? api('GET', `/v1/campaigns/${id}/clicks`) : Promise.resolve(null)), [id]);
  if (!campaign.track_clicks && !campaign.track_opens) return null;
  const e = stats && stats.engagement;
  return html`<section aria-labelledby="engagement"><h2 id="engagement">Engagement</h2>
    <p>Hits suspected of being bots (link scanners, prefetches, the hidden honeypot link, clicks within seconds of delivery) count in the totals, not among people.${' '}
      <button type="button" class="link" data-reads onClick=${() => { reloadStats(); reloadClicks(); }}>Refresh</button></p>
    <${ErrorBox} error=${statsError || clicksError} />
    ${e && html`<div class="table-wrap"><table class="engagement">
      <caption class="sr-only">Clicks and opens</caption>
      <thead><tr><th scope="col"><span class="sr-only">Measure</span></th><th scope="col">Total</th><th scope="col">Unique recipients</th>
        <th scope="col">People</th><th scope="col">Unique people</th><th scope="col">Suspected bots</th></tr></thead>
      <tbody>
        ${campaign.track_clicks && html`<${Row} label="Clicks" kind="clicks" total=${e.clicks} unique=${e.unique_clicks} human=${e.human_clicks} uniqueHuman=${e.unique_human_clicks} />`}
        ${campaign.track_opens && html`<${Row} label="Opens" kind="opens" total=${e.opens} unique=${e.unique_opens} human=${e.human_opens} uniqueHuman=${e.unique_human_opens} />`}
      </tbody></table></div>
      ${campaign.track_clicks && html`<p>Honeypot hits (scanners following a link no person sees): <strong data-honeypot=${e.honeypot_hits}>${num(e.honeypot_hits)}</strong>.</p>`}
      ${campaign.track_opens && html`<p class="hint">Opens are unreliable: Apple Mail Privacy Protection fetches every image of every message on delivery, read or not, and many clients block images, so an open neither proves a read nor its absence a non-read.</p>`}`}
    ${clicks && html`<h3>Clicks per link</h3>
      ${clicks.links.length === 0 ? html`<p>No tracked link has been clicked yet.</p>` : html`<div class="table-wrap"><table class="links">
        <caption class="sr-only">Clicks per link</caption>
        <thead><tr><th scope="col">Link</th><th scope="col">Total</th><th scope="col">Unique recipients</th><th scope="col">People</th><th scope="col">Unique people</th><th scope="col">Suspected bots</th></tr></thead>
        <tbody>${clicks.links.map((/** @type {any} */ l) => html`<tr key=${l.index} data-link=${l.index}>
          <th scope="row"><span class="sr-only">Link ${l.index}: </span><code class="url">${l.url}</code></th>
          <td data-total=${l.total}>${num(l.total)}</td><td data-unique=${l.unique}>${num(l.unique)}</td>
          <td data-human=${l.human}>${num(l.human)}</td><td data-unique-human=${l.unique_human}>${num(l.unique_human)}</td>
          <td data-bots=${l.total - l.human}>${num(l.total - l.human)}</td></tr>`)}</tbody>
      </table></div>`}`}
  </section>`;
}
