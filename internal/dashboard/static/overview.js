import { html, useState, useRef } from './preact-htm.js';
import { api } from './api.js';
import { useLoad, ErrorBox, Empty, when, PageHeader, toast } from './ui.js';
import { CampaignProgress } from './progress.js';

const live = ['building', 'sending', 'paused', 'approved'];
const finished = ['sent', 'cancelled', 'failed'];

export function Overview() {
  const [campaigns, error, reload] = useLoad(async () => {
    const pages = await Promise.all(live.map((s) => api('GET', `/v1/campaigns?status=${s}&limit=20`)));
    return pages.flatMap((p) => p.data);
  });
  // The newest ten, newest first, however many the window holds.
  const [feedback] = useLoad(() => api('GET', '/v1/events?type=subscriber.bounced,subscriber.complained,subscriber.unsubscribed&order=newest&limit=10'));
  const [senders] = useLoad(() => api('GET', '/v1/senders'));
  // A campaign that finishes while the page is open keeps its card (at 100 %, "sent"):
  // the reload that follows its last status no longer lists it, and a person watching
  // it go out should see it arrive, not vanish.
  const [done, setDone] = useState(/** @type {any[]} */ ([]));
  const ended = useRef(/** @type {Set<number>} */ (new Set()));
  const onStatus = (/** @type {any} */ c, /** @type {string} */ s) => {
    if (s === c.status || ended.current.has(c.id)) return;
    if (finished.includes(s)) {
      ended.current.add(c.id);
      setDone((d) => [...d, { ...c, status: s }]);
    }
    reload();
  };
  const shown = campaigns ? [...campaigns, ...done.filter((d) => !campaigns.some((/** @type {any} */ c) => c.id === d.id))] : null;
  const recent = feedback ? feedback.data : [];
  const paused = senders ? senders.data.filter((/** @type {any} */ s) => s.paused_reason) : [];
  return html`<${PageHeader} title="Overview"><a class="button primary" href="#/campaigns/new">New campaign</a></${PageHeader}>
    <section aria-labelledby="now">
      <h2 id="now">Campaigns going out</h2>
      <${ErrorBox} error=${error} />
      ${shown && shown.length === 0 && html`<${Empty} title="Nothing is sending right now.">
        <p>Create a campaign under <a href="#/campaigns/new">Campaigns</a>, approve it, and watch it go out here.</p></${Empty}>`}
      ${shown && shown.map((/** @type {any} */ c) => html`<div class="card" key=${c.id}>
        <h3><a href=${'#/campaigns/' + c.id}>${c.name}</a></h3>
        <${CampaignProgress} id=${c.id} name=${c.name} onStatus=${(/** @type {string} */ s) => onStatus(c, s)} />
      </div>`)}
    </section>
    <section aria-labelledby="feedback">
      <h2 id="feedback">Recent bounces, complaints and opt-outs</h2>
      ${recent.length === 0 ? html`<p>None yet.</p>` : html`<ul class="plain feedback">
        ${recent.map((/** @type {any} */ e) => html`<li key=${e.id}><span class="tag">${e.type.replace('subscriber.', '')}</span> ${e.data.email || ''} <small>${when(e.timestamp)}</small></li>`)}
      </ul>`}
    </section>
    <section aria-labelledby="senders">
      <h2 id="senders">Sender health</h2>
      ${senders && senders.data.length === 0 && html`<p>No senders of the account's own: mail leaves through the deployment's provider. <a href="#/senders">Add one</a>.</p>`}
      ${paused.map((/** @type {any} */ s) => html`<p class="error" key=${s.id}>Sender <a href=${'#/senders/' + s.id}><strong>${s.name}</strong></a> is paused: ${s.paused_reason || 'paused'}</p>`)}
      ${senders && senders.data.length > 0 && paused.length === 0 && html`<p data-senders-paused="0">${senders.data.length === 1 ? 'The one sender is not paused' : `None of the ${senders.data.length} senders is paused`}:
        mail goes out through ${senders.data.length === 1 ? 'it' : 'them'}. A sender is paused when its provider keeps refusing its credentials; check one on its page with Verify.</p>`}
    </section>`;
}
