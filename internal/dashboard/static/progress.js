// A campaign's live progress: counts refetched when the event stream says one of
// its sends settled (at most a few times a second), never on a timer.
import { html, useState, useEffect, useRef } from './preact-htm.js';
import { api, subscribe, onStreamOpen } from './api.js';
import { num, useId } from './ui.js';

/** @param {any} c */
function done(c) { return c.sent + c.failed + c.suppressed + c.cancelled + c.unknown; }

/** @param {number} s */
function duration(s) {
  if (!isFinite(s) || s <= 0) return '';
  if (s < 60) return `${Math.ceil(s)} s`;
  if (s < 3600) return `${Math.ceil(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

/**
 * @param {{id:number, name?:string, onStatus?:(s:string)=>void, onStats?:(s:any)=>void}} p
 */
export function CampaignProgress({ id, name, onStatus, onStats }) {
  const [stats, setStats] = useState(/** @type {any} */ (null));
  const samples = useRef(/** @type {Array<[number, number]>} */ ([]));
  const pending = useRef(/** @type {any} */ (null));
  const pid = useId('progress');
  // The callbacks of the latest render: the effect below lives as long as the
  // page, and a callback it captured at mount would compare a new status with the
  // campaign's status of then (a retried campaign, sent → sending → sent, would
  // never be seen sent again).
  const latest = useRef({ onStatus, onStats });
  latest.current = { onStatus, onStats };
  useEffect(() => {
    let live = true;
    const load = () => {
      pending.current = null;
      api('GET', `/v1/campaigns/${id}/stats`).then((s) => {
        if (!live) return;
        const now = Date.now();
        samples.current.push([now, done(s.counts)]);
        samples.current = samples.current.filter(([t]) => now - t < 10000);
        setStats(s);
        const { onStatus: status, onStats: stats } = latest.current;
        if (status) status(s.status);
        if (stats) stats(s);
      }, () => {});
    };
    load();
    const off = subscribe((ev) => {
      if (ev.data && ev.data.campaign_id === id && !pending.current) pending.current = setTimeout(load, 250);
    });
    // What happened between the first load and the stream's opening is in neither.
    const offOpen = onStreamOpen(load);
    return () => { live = false; off(); offOpen(); if (pending.current) clearTimeout(pending.current); };
  }, [id]);
  if (!stats) return html`<div class="progress"><p>Loading progress…</p></div>`;
  const c = stats.counts;
  const total = stats.total;
  const d = done(c);
  const pct = stats.status === 'sent' ? 100 : total > 0 ? Math.floor((d * 100) / total) : 0;
  const s = samples.current;
  let rate = 0;
  if (s.length > 1) {
    const [t0, d0] = s[0];
    const [t1, d1] = s[s.length - 1];
    if (t1 > t0) rate = ((d1 - d0) * 1000) / (t1 - t0);
  }
  const left = rate > 0 ? duration((c.queued + c.sending) / rate) : '';
  return html`<div class="progress" data-campaign=${id} data-percent=${pct} data-status=${stats.status}>
    <label for=${pid}>${name ? `${name}: ` : ''}${pct} % (${stats.status})</label>
    <progress id=${pid} max=${total || 1} value=${total ? d : 0}>${pct} %</progress>
    <p class="counts">
      <span>sent ${num(c.sent)}</span> · <span>queued ${num(c.queued + c.sending)}</span> · <span>failed ${num(c.failed)}</span> · <span>unknown ${num(c.unknown)}</span> · <span>suppressed ${num(c.suppressed)}</span>
      ${rate > 0 && html` · <span>${rate.toFixed(0)}/s</span>`}
      ${left && stats.status === 'sending' && html` · <span>about ${left} left</span>`}
    </p>
  </div>`;
}
