// A campaign's A/B test (docs/ab-tests.md): its variants while it is a draft,
// and the report per variant once it sends, with the winner chosen by hand.
import { html, useState, useEffect } from './preact-htm.js';
import { api, Problem } from './api.js';
import { Field, Select, ErrorBox, fieldError, num, toast } from './ui.js';
import { can } from './perm.js';

const letters = ['A', 'B', 'C', 'D', 'E'];

/** The test of campaign id, or null when it has none (a 404). @param {number} id */
async function loadTest(id) {
  try { return await api('GET', `/v1/campaigns/${id}/ab-test`); } catch (err) {
    if (err instanceof Problem && err.status === 404) return null;
    throw err;
  }
}

/** The form's state from a stored test (or a new one). @param {any} t */
function formOf(t) {
  const variants = t ? t.variants.map((/** @type {any} */ v) => ({ subject: v.subject || '', from_name: v.from_name || '', html_template: v.html_template || '' }))
    : [{ subject: '', from_name: '', html_template: '' }, { subject: '', from_name: '', html_template: '' }];
  return {
    mode: t ? t.mode : 'split', test_percent: t && t.test_percent ? String(t.test_percent) : '20',
    wait_minutes: t && t.wait_seconds ? String(Math.round(t.wait_seconds / 60)) : '240', metric: t && t.metric ? t.metric : 'clicks', variants,
  };
}

/** A rate as a percentage. @param {number} r */
const pct = (r) => `${(r * 100).toFixed(1)} %`;

/**
 * The significance of a variant's difference from the leader, in words.
 * @param {any} r a row of the report
 */
export function significance(r) {
  if (r.leader) return 'leader';
  const p = r.p_value.toFixed(3);
  return r.p_value < 0.05 ? `significant (p = ${p})` : `not yet significant (p = ${p}): may be noise`;
}

/**
 * The A/B section of a campaign's page: the settings of a draft's test (editable
 * with campaigns:write), or the report of a campaign that sends or sent one.
 * @param {{campaign:any}} p
 */
export function ABTest({ campaign }) {
  const [test, setTest] = useState(/** @type {any} */ (undefined));
  const [loadError, setLoadError] = useState(/** @type {any} */ (null));
  const reload = () => loadTest(campaign.id).then(setTest, setLoadError);
  useEffect(() => { reload(); }, [campaign.id, campaign.status]);
  // While it sends the counts move: read the report again every 10 seconds.
  useEffect(() => {
    if (campaign.status !== 'sending' && campaign.status !== 'paused') return;
    const t = setInterval(reload, 10000);
    return () => clearInterval(t);
  }, [campaign.id, campaign.status]);
  if (test === undefined && !loadError) return null;
  const draft = campaign.status === 'draft';
  if (!draft && !test) return null;
  return html`<section aria-labelledby="ab-test" class="ab-test" data-ab=${test ? test.mode : 'none'}><h2 id="ab-test">A/B test</h2>
    <${ErrorBox} error=${loadError} />
    ${draft && can('campaigns:write') && html`<${ABForm} key=${test ? 'set' : 'none'} id=${campaign.id} test=${test} onSaved=${setTest} />`}
    ${draft && !can('campaigns:write') && (test ? html`<${Settings} test=${test} />` : html`<p>No A/B test: every recipient gets the same message.</p>`)}
    ${!draft && test && html`<${Settings} test=${test} /><${ABReport} campaign=${campaign} test=${test} onChosen=${setTest} />`}
  </section>`;
}

/** The test's settings in words. @param {{test:any}} p */
function Settings({ test }) {
  return html`<dl class="facts" data-ab-settings>
    <dt>Mode</dt><dd>${test.mode === 'split' ? 'split: the whole audience is divided among the variants'
      : `test: ${test.test_percent} % first, then the winner to the rest after ${Math.round(test.wait_seconds / 60)} minutes`}</dd>
    ${test.mode === 'test' && html`<dt>Winner by</dt><dd>${test.metric === 'manual' ? 'a person (manual)' : test.metric === 'opens' ? 'opens (unreliable)' : 'clicks'}</dd>
      <dt>Winner</dt><dd data-winner=${test.winner || ''}>${test.winner ? `variant ${test.winner} (${test.chosen_by || 'chosen'})` : 'not chosen yet'}</dd>`}
    <dt>Variants</dt><dd>${test.variants.map((/** @type {any} */ v) => html`<span key=${v.variant}>${v.variant}: ${v.subject || "the campaign's subject"}${v.from_name ? `, from ${v.from_name}` : ''}. </span>`)}</dd>
  </dl>`;
}

/** @param {{id:number, test:any, onSaved:(t:any)=>void}} p */
function ABForm({ id, test, onSaved }) {
  const [open, setOpen] = useState(!!test);
  const [f, setF] = useState(formOf(test));
  const [error, setError] = useState(/** @type {any} */ (null));
  const [busy, setBusy] = useState(false);
  const set = (/** @type {string} */ k) => (/** @type {any} */ v) => setF((old) => ({ ...old, [k]: v }));
  const setVar = (/** @type {number} */ i, /** @type {string} */ k) => (/** @type {string} */ v) =>
    setF((old) => ({ ...old, variants: old.variants.map((x, j) => (j === i ? { ...x, [k]: v } : x)) }));
  /** @type {Record<string,string>} */
  const labels = { '/variants': 'Variants', '/test_percent': 'Test group', '/wait_seconds': 'Wait', '/metric': 'Winner by', '/mode': 'Mode' };
  f.variants.forEach((_, i) => {
    labels[`/variants/${i}`] = `Variant ${letters[i]}`;
    for (const [k, l] of [['subject', 'subject'], ['from_name', 'from name'], ['html_template', 'HTML'], ['text_template', 'text'], ['template_id', 'template']]) labels[`/variants/${i}/${k}`] = `Variant ${letters[i]}, ${l}`;
  });
  const save = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    setBusy(true);
    /** @type {any} */
    const body = {
      mode: f.mode,
      variants: f.variants.map((v) => {
        /** @type {any} */
        const o = {};
        if (v.subject.trim()) o.subject = v.subject;
        if (v.from_name.trim()) o.from_name = v.from_name;
        if (v.html_template.trim()) o.html_template = v.html_template;
        return o;
      }),
    };
    if (f.mode === 'test') {
      body.test_percent = Number(f.test_percent);
      body.wait_seconds = Math.round(Number(f.wait_minutes) * 60);
      body.metric = f.metric;
    }
    try {
      const t = await api('PUT', `/v1/campaigns/${id}/ab-test`, body);
      toast('A/B test saved.');
      onSaved(t);
    } catch (err) { setError(err); }
    setBusy(false);
  };
  const remove = async () => {
    if (!confirm('Remove the A/B test? Every recipient will get the campaign\'s own message.')) return;
    setError(null);
    try {
      await api('DELETE', `/v1/campaigns/${id}/ab-test`);
      toast('A/B test removed.');
      onSaved(null);
    } catch (err) { setError(err); }
  };
  if (!open) {
    return html`<p>No A/B test: every recipient gets the same message.</p>
      <p><button type="button" class="secondary" onClick=${() => setOpen(true)}>Set up an A/B test</button></p>`;
  }
  return html`<form onSubmit=${save} class="form" aria-label="A/B test">
    <${Select} label="Mode" value=${f.mode} onChange=${set('mode')} error=${fieldError(error, '/mode')}
      options=${[['split', 'Split: divide the whole audience'], ['test', 'Test: a test group first, then the winner to the rest']]} />
    ${f.mode === 'test' && html`
      <${Field} label="Test group (% of the audience)" type="number" value=${f.test_percent} onInput=${set('test_percent')} required error=${fieldError(error, '/test_percent')} hint="1 to 50." />
      <${Field} label="Wait (minutes) before choosing the winner" type="number" value=${f.wait_minutes} onInput=${set('wait_minutes')} required error=${fieldError(error, '/wait_seconds')} hint="From the start of the send; 1 minute to 30 days." />
      <${Select} label="Winner by" value=${f.metric} onChange=${set('metric')} error=${fieldError(error, '/metric')}
        options=${[['clicks', 'Clicks by people'], ['opens', 'Opens by people (unreliable: image proxies)'], ['manual', 'A person chooses']]} />`}
    ${f.variants.map((v, i) => html`<fieldset key=${i} data-variant=${letters[i]}>
      <legend>Variant ${letters[i]}</legend>
      <${Field} label=${`Variant ${letters[i]} subject`} value=${v.subject} onInput=${setVar(i, 'subject')} error=${fieldError(error, `/variants/${i}/subject`)} hint="Empty: the campaign's subject." />
      <${Field} label=${`Variant ${letters[i]} from name`} value=${v.from_name} onInput=${setVar(i, 'from_name')} error=${fieldError(error, `/variants/${i}/from_name`)} hint="Optional." />
      <${Field} label=${`Variant ${letters[i]} HTML`} textarea value=${v.html_template} onInput=${setVar(i, 'html_template')} error=${fieldError(error, `/variants/${i}/html_template`)}
        hint="Optional; with click tracking, the same links in the same order as the campaign's." />
      ${f.variants.length > 2 && html`<button type="button" class="link" onClick=${() => setF((old) => ({ ...old, variants: old.variants.filter((_, j) => j !== i) }))}>Remove variant ${letters[i]}</button>`}
    </fieldset>`)}
    ${fieldError(error, '/variants') && html`<p class="field-error">${fieldError(error, '/variants')}</p>`}
    <${ErrorBox} error=${error} labels=${labels} />
    <div class="actions">
      ${f.variants.length < 5 && html`<button type="button" class="secondary" onClick=${() => setF((old) => ({ ...old, variants: [...old.variants, { subject: '', from_name: '', html_template: '' }] }))}>Add a variant</button>`}
      <button type="submit" class="primary" disabled=${busy}>Save the A/B test</button>
      ${test && html`<button type="button" class="danger" onClick=${remove}>Remove the A/B test</button>`}
      ${!test && html`<button type="button" class="secondary" onClick=${() => setOpen(false)}>No A/B test</button>`}
    </div>
  </form>`;
}

/**
 * The report per variant, and (test mode, no winner yet, campaigns:approve) a
 * button per variant to choose it.
 * @param {{campaign:any, test:any, onChosen:(t:any)=>void}} p
 */
function ABReport({ campaign, test, onChosen }) {
  const [error, setError] = useState(/** @type {any} */ (null));
  const [busy, setBusy] = useState(false);
  const choosable = test.mode === 'test' && !test.winner && can('campaigns:approve') && (campaign.status === 'sending' || campaign.status === 'paused');
  const choose = async (/** @type {string} */ v) => {
    if (!confirm(`Choose variant ${v} as the winner? The rest of the audience gets it; this cannot be undone.`)) return;
    setBusy(true);
    setError(null);
    try {
      onChosen(await api('POST', `/v1/campaigns/${campaign.id}/winner`, { variant: v }));
      toast(`Variant ${v} chosen: the rest of the audience gets it.`);
    } catch (err) { setError(err); }
    setBusy(false);
  };
  const rows = test.report || [];
  return html`<div class="table-wrap"><table class="ab-report">
      <caption>Per variant (people only: scanner hits left out; rates against sent)</caption>
      <thead><tr><th scope="col">Variant</th><th scope="col">Recipients</th><th scope="col">Sent</th><th scope="col">Opened</th><th scope="col">Open rate</th>
        <th scope="col">Clicked</th><th scope="col">Click rate</th><th scope="col">Against the leader</th>${choosable && html`<th scope="col">Winner</th>`}</tr></thead>
      <tbody>${rows.map((/** @type {any} */ r) => html`<tr key=${r.variant} data-variant=${r.variant} data-recipients=${r.recipients} data-sent=${r.sent}>
        <th scope="row">${r.variant}${test.winner === r.variant ? ' (winner)' : ''}</th><td>${num(r.recipients)}</td><td>${num(r.sent)}</td>
        <td>${num(r.opened)}</td><td>${pct(r.open_rate)}</td><td>${num(r.clicked)}</td><td>${pct(r.click_rate)}</td>
        <td data-p=${r.p_value}>${significance(r)}</td>
        ${choosable && html`<td><button type="button" disabled=${busy} onClick=${() => choose(r.variant)} aria-label=${`Choose variant ${r.variant} as winner`}>Choose as winner</button></td>`}
      </tr>`)}</tbody>
    </table></div>
    <p class="hint">A p-value of 0.05 or more means the difference from the leader may well be noise: wait, or send to more people, before choosing from it.</p>
    <${ErrorBox} error=${error} />`;
}
