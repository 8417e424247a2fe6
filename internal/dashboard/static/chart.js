// A campaign's counts over time, drawn with uPlot (vendored): its history from
// GET /v1/campaigns/{id}/timeline when the page opens, then again whenever the
// event stream reports one of its sends settling (at most about once a second) —
// fed by the stream while it sends, never by a timer.
import { html, useState, useEffect, useRef } from './preact-htm.js';
import uPlot from './uplot.js';
import { api, subscribe, onStreamOpen } from './api.js';
import { ErrorBox, num } from './ui.js';

/** The lines drawn: cumulative counts of sends by how they settled (each
 * stroke the fallback of its --series-* token, which the dark scheme changes). */
const lines = [
  { key: 'sent', label: 'Sent', stroke: '#176b2c' },
  { key: 'failed', label: 'Failed', stroke: '#a3141c' },
  { key: 'unknown', label: 'Unknown', stroke: '#8a5a00' },
  { key: 'suppressed', label: 'Suppressed', stroke: '#4b5563' },
];

/**
 * The timeline as uPlot's columns: seconds, then each line's running total.
 * @param {{points: Array<Record<string, any>>, step_seconds?: number}} tl
 * @returns {{data: uPlot.AlignedData, totals: number[]}}
 */
function columns(tl) {
  /** @type {number[]} */
  const xs = [];
  /** @type {number[][]} */
  const ys = lines.map(() => []);
  const totals = lines.map(() => 0);
  // The counts are 0 one step before the first bucket. Drawing that point keeps a
  // campaign that settled within one bucket from having a range of one instant,
  // which uPlot would widen to 86,400,000 s (its one-day pad taken as seconds).
  if (tl.points.length > 0) {
    xs.push(Date.parse(tl.points[0].at) / 1000 - Math.max(1, Number(tl.step_seconds) || 1));
    ys.forEach((y) => y.push(0));
  }
  for (const p of tl.points) {
    xs.push(Date.parse(p.at) / 1000);
    lines.forEach((l, i) => { totals[i] += Number(p[l.key]) || 0; ys[i].push(totals[i]); });
  }
  return { data: [xs, ...ys], totals };
}

/**
 * A design token's value now (tokens.css), or fallback.
 * @param {string} name @param {string} fallback
 */
function token(name, fallback) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

/** @param {{id:number}} p */
export function CampaignChart({ id }) {
  const box = useRef(/** @type {HTMLDivElement|null} */ (null));
  const plot = useRef(/** @type {uPlot|null} */ (null));
  const [tl, setTl] = useState(/** @type {any} */ (null));
  const [error, setError] = useState(/** @type {any} */ (null));
  // Loads of the timeline: all of them, and those a stream event asked for.
  const [updates, setUpdates] = useState({ all: 0, stream: 0 });
  useEffect(() => {
    let live = true;
    /** @type {ReturnType<typeof setTimeout>|null} */
    let pending = null;
    const load = (fromStream = false) => {
      pending = null;
      api('GET', `/v1/campaigns/${id}/timeline`).then((t) => {
        if (live) { setTl(t); setUpdates((n) => ({ all: n.all + 1, stream: n.stream + (fromStream ? 1 : 0) })); }
      }, (err) => live && setError(err));
    };
    load();
    const off = subscribe((ev) => {
      if (ev.data && ev.data.campaign_id === id && String(ev.type).startsWith('send.') && !pending) pending = setTimeout(() => load(true), 1000);
    });
    // What happened between the first load and the stream's opening is in neither.
    const offOpen = onStreamOpen(() => load());
    return () => { live = false; off(); offOpen(); if (pending) clearTimeout(pending); };
  }, [id]);
  useEffect(() => {
    const el = box.current;
    if (!el || !tl || tl.points.length === 0) return;
    const { data } = columns(tl);
    if (plot.current) {
      plot.current.setData(data);
      return;
    }
    plot.current = new uPlot({
      width: Math.max(260, el.clientWidth), height: 240, legend: { show: false },
      scales: { x: { time: true } },
      series: [{}, ...lines.map((l) => ({ label: l.label, stroke: token('--series-' + l.key, l.stroke), width: 2 }))],
      axes: [{ stroke: token('--muted', '#4b5563') }, { size: 56, stroke: token('--muted', '#4b5563') }],
      // The range drawn, on the figure: what a test (or a curious reader) checks.
      hooks: { draw: [(u) => { const fig = el.parentElement; if (fig) { fig.dataset.xMin = String(u.scales.x.min); fig.dataset.xMax = String(u.scales.x.max); } }] },
    }, data, el);
  }, [tl]);
  useEffect(() => {
    const el = box.current;
    const ro = el && typeof ResizeObserver !== 'undefined'
      ? new ResizeObserver(() => { if (plot.current && el) plot.current.setSize({ width: Math.max(260, el.clientWidth), height: 240 }); })
      : null;
    if (ro && el) ro.observe(el);
    return () => { if (ro) ro.disconnect(); if (plot.current) plot.current.destroy(); plot.current = null; };
  }, []);
  const totals = tl ? columns(tl).totals : lines.map(() => 0);
  const summary = lines.map((l, i) => `${l.label.toLowerCase()} ${num(totals[i])}`).join(', ');
  const empty = tl && tl.points.length === 0;
  return html`<section aria-labelledby="chart-title"><h2 id="chart-title">Counts over time</h2>
    <${ErrorBox} error=${error} />
    <figure class="chart" data-points=${tl ? tl.points.length : undefined} data-updates=${updates.all} data-stream-updates=${updates.stream}>
      <div ref=${box} class="chart-plot" role="img" aria-label=${'Sends settled over time: ' + summary}></div>
      ${empty && html`<p>Nothing has been sent yet: the chart starts with the first message.</p>`}
      <figcaption><ul class="legend">${lines.map((l, i) => html`<li key=${l.key}><span class=${'swatch ' + l.key} aria-hidden="true"></span>${l.label}: ${num(totals[i])}</li>`)}</ul></figcaption>
    </figure>
  </section>`;
}
