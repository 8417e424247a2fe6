// A sequence's definition as a form: the trigger (lists, templates, senders, sender
// pools and segments chosen by name from the API, never typed as ids) and an ordered steps
// editor. The API checks everything; its 422 names the field as a JSON pointer
// (/steps/2/duration), which the form shows at that step's field.
import { html, useState, useLayoutEffect, useRef } from './preact-htm.js';
import { api, Problem } from './api.js';
import { Field, Select, ErrorBox, fieldError, useLoad } from './ui.js';

/** @type {Array<[string,string]>} */
export const triggerTypes = [
  ['manual', 'manual: enrolled by hand or by the API'],
  ['list_joined', 'list_joined: someone joins a list'],
  ['confirmed', 'confirmed: a confirmed subscriber joins a list'],
  ['event', 'event: your application tracks an event'],
  ['date_attribute', 'date_attribute: a date in the subscriber\'s attributes'],
  ['segment_entered', 'segment_entered: a subscriber comes to match a segment'],
];

/** @type {Array<[string,string]>} */
const stepTypes = [['send', 'send an email'], ['wait', 'wait'], ['condition', 'condition (exit when true)'], ['wait_for_event', 'wait for an event']];

const weekdays = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

/**
 * A step as the form holds it: every field a string, so inputs stay controlled.
 * sender_id is a send step's route: a sender's id, or "pool:<id>" for a sender pool.
 * @typedef {{key:number, type:string, template_id:string, sender_id:string, from_email:string, from_name:string, reply_to:string,
 *   duration:string, at:string, weekdays:string[], cond:string, in_segment:string, left_list:string, data:string, clicked:string,
 *   event:string, timeout:string, on_event:string, on_timeout:string}} FormStep
 */

let stepKey = 0;

/** @param {string} type @param {any} [s] @returns {FormStep} */
function formStep(type, s = {}) {
  const cond = s.if ? (s.if.in_segment ? 'in_segment' : s.if.left_list ? 'left_list' : s.if.clicked ? 'clicked' : 'data') : 'in_segment';
  const str = (/** @type {any} */ v) => (v === undefined || v === null ? '' : String(v));
  return {
    key: ++stepKey, type, template_id: str(s.template_id), sender_id: s.pool_id ? 'pool:' + s.pool_id : str(s.sender_id), from_email: str(s.from_email),
    from_name: str(s.from_name), reply_to: str(s.reply_to), duration: str(s.duration), at: str(s.at), weekdays: s.weekdays || [],
    cond, in_segment: str(s.if && s.if.in_segment), left_list: str(s.if && s.if.left_list), data: str(s.if && s.if.data),
    clicked: str(s.if && s.if.clicked && s.if.clicked.step),
    event: str(s.event), timeout: str(s.timeout), on_event: str(s.on_event), on_timeout: str(s.on_timeout),
  };
}

/** The API's step: only the fields of its type (the API refuses any other). @param {FormStep} f */
function apiStep(f) {
  /** @type {any} */
  const s = { type: f.type };
  const put = (/** @type {string} */ k, /** @type {string} */ v, num = false) => { if (v !== '') s[k] = num ? Number(v) : v; };
  switch (f.type) {
    case 'send':
      put('template_id', f.template_id, true);
      if (f.sender_id.startsWith('pool:')) s.pool_id = Number(f.sender_id.slice(5));
      else put('sender_id', f.sender_id, true);
      put('from_email', f.from_email); put('from_name', f.from_name); put('reply_to', f.reply_to);
      break;
    case 'wait':
      put('duration', f.duration); put('at', f.at);
      if (f.weekdays.length) s.weekdays = weekdays.filter((d) => f.weekdays.includes(d));
      break;
    case 'condition':
      if (f.cond === 'in_segment') s.if = f.in_segment ? { in_segment: Number(f.in_segment) } : {};
      else if (f.cond === 'left_list') s.if = f.left_list ? { left_list: Number(f.left_list) } : {};
      else if (f.cond === 'clicked') s.if = f.clicked !== '' ? { clicked: { step: Number(f.clicked) } } : {};
      else s.if = { data: f.data };
      break;
    case 'wait_for_event':
      put('event', f.event); put('timeout', f.timeout); put('on_event', f.on_event); put('on_timeout', f.on_timeout);
      break;
  }
  return s;
}

/**
 * The API's errors under a prefix that no field of the step shows (so none is lost).
 * @param {any} error @param {string} prefix @param {string[]} shown
 */
function otherErrors(error, prefix, shown) {
  if (!(error instanceof Problem)) return [];
  return Object.entries(error.fields).filter(([p]) => (p === prefix || p.startsWith(prefix + '/')) && !shown.includes(p)).map(([, d]) => d);
}

/**
 * The send steps before step i, as choices of a clicked condition: the API names a
 * step by its position, the page by its number and template.
 * @param {FormStep[]} steps @param {number} i @param {any} templates
 * @returns {Array<[string,string]>}
 */
function earlierSends(steps, i, templates) {
  const name = (/** @type {string} */ id) => ((templates && templates.data.find((/** @type {any} */ x) => String(x.id) === id)) || { name: 'no template yet' }).name;
  return steps.slice(0, i).flatMap((st, j) => (st.type === 'send' ? [/** @type {[string,string]} */ ([String(j), `Step ${j + 1}: ${name(st.template_id)}`])] : []));
}

/**
 * Options of a select from a page of the API's objects, with an empty first choice.
 * @param {any} page @param {string} none @param {(x:any)=>string} [label]
 * @returns {Array<[string,string]>}
 */
function choices(page, none, label = (x) => x.name) {
  return [['', none], ...(page ? page.data.map((/** @type {any} */ x) => /** @type {[string,string]} */ ([String(x.id), label(x)])) : [])];
}

/**
 * earlier are the send steps before this one, as choices of a clicked condition: [position, label].
 * @param {{step:FormStep, i:number, count:number, error:any, refs:any, earlier:Array<[string,string]>, set:(s:FormStep)=>void, move:(d:number)=>void, remove:()=>void}} p
 */
function StepEditor({ step, i, count, error, refs, earlier, set, move, remove }) {
  const at = (/** @type {string} */ name) => `/steps/${i}/${name}`;
  const err = (/** @type {string} */ name) => fieldError(error, at(name));
  const upd = (/** @type {string} */ k) => (/** @type {any} */ v) => set({ ...step, [k]: v });
  /** @type {string[]} */
  let shown = [];
  let body;
  switch (step.type) {
    case 'send':
      shown = ['template_id', 'sender_id', 'pool_id', 'from_email', 'from_name', 'reply_to'].map(at);
      body = html`
        <${Select} label=${`Step ${i + 1} template`} value=${step.template_id} onChange=${upd('template_id')} error=${err('template_id')}
          options=${choices(refs.templates, 'Choose a template')} />
        <${Field} label=${`Step ${i + 1} From address`} type="email" value=${step.from_email} onInput=${upd('from_email')} error=${err('from_email')} />
        <${Field} label=${`Step ${i + 1} From name`} value=${step.from_name} onInput=${upd('from_name')} error=${err('from_name')} />
        <${Field} label=${`Step ${i + 1} Reply-To`} type="email" value=${step.reply_to} onInput=${upd('reply_to')} error=${err('reply_to')} />
        <${Select} label=${`Step ${i + 1} sender`} value=${step.sender_id} onChange=${upd('sender_id')} error=${err('sender_id') || err('pool_id')}
          options=${[...choices(refs.senders, 'The account\'s default sender', (s) => s.name + ' (' + s.type + ')'),
            ...(refs.pools ? refs.pools.data.map((/** @type {any} */ p) => /** @type {[string,string]} */ (['pool:' + p.id, 'Pool: ' + p.name])) : [])]} />`;
      break;
    case 'wait':
      shown = ['duration', 'at', 'weekdays'].map(at);
      body = html`
        <${Field} label=${`Step ${i + 1} duration`} value=${step.duration} onInput=${upd('duration')} error=${err('duration')} hint="90m, 72h or 3d; empty with a time of day: the next such time." />
        <${Field} label=${`Step ${i + 1} time of day`} value=${step.at} onInput=${upd('at')} error=${err('at')} hint="HH:MM, 24-hour, in the subscriber's time zone (attributes.timezone), else the sequence's." />
        <fieldset><legend>Step ${i + 1} on these days only</legend>
          ${weekdays.map((d) => html`<label class="check" key=${d}><input type="checkbox" checked=${step.weekdays.includes(d)}
            onChange=${(/** @type {any} */ e) => set({ ...step, weekdays: e.currentTarget.checked ? [...step.weekdays, d] : step.weekdays.filter((x) => x !== d) })} /> ${d}</label>`)}
          ${err('weekdays') && html`<p class="field-error">${err('weekdays')}</p>`}
        </fieldset>`;
      break;
    case 'condition':
      shown = ['if/in_segment', 'if/left_list', 'if/data', 'if/clicked', 'if/clicked/step'].map(at);
      body = html`
        <${Select} label=${`Step ${i + 1} exit when`} value=${step.cond} onChange=${upd('cond')}
          options=${[['in_segment', 'the subscriber matches a segment'], ['left_list', 'the subscriber is not in a list'], ['data', 'the enrollment\'s data matches'], ['clicked', 'the subscriber clicked a link of an earlier email']]} />
        ${step.cond === 'in_segment' && html`<${Select} label=${`Step ${i + 1} segment`} value=${step.in_segment} onChange=${upd('in_segment')} error=${err('if/in_segment')}
          options=${choices(refs.segments, 'Choose a segment')} />`}
        ${step.cond === 'left_list' && html`<${Select} label=${`Step ${i + 1} list`} value=${step.left_list} onChange=${upd('left_list')} error=${err('if/left_list')}
          options=${choices(refs.lists, 'Choose a list')} />`}
        ${step.cond === 'clicked' && html`<${Select} label=${`Step ${i + 1} email clicked`} value=${step.clicked} onChange=${upd('clicked')}
          error=${err('if/clicked/step') || err('if/clicked')} options=${[['', earlier.length ? 'Choose an earlier email' : 'No email step before this one'], ...earlier]} />
          <p class="hint">A person's click in this run; clicks by link scanners (suspected bots) do not count.</p>`}
        ${step.cond === 'data' && html`<${Field} label=${`Step ${i + 1} data predicate`} value=${step.data} onInput=${upd('data')} error=${err('if/data')}
          hint=${'A jsonpath predicate over the trigger\'s and awaited events\' data, e.g. $.plan == "pro"'} />`}`;
      break;
    case 'wait_for_event':
      shown = ['event', 'timeout', 'on_event', 'on_timeout'].map(at);
      body = html`
        <${Field} label=${`Step ${i + 1} event name`} value=${step.event} onInput=${upd('event')} error=${err('event')} hint="As your application tracks it (POST /v1/track)." />
        <${Field} label=${`Step ${i + 1} timeout`} value=${step.timeout} onInput=${upd('timeout')} error=${err('timeout')} hint="How long to wait at most: 90m, 72h, 3d." />
        <${Select} label=${`Step ${i + 1} when the event comes`} value=${step.on_event} onChange=${upd('on_event')} error=${err('on_event')}
          options=${[['', 'continue'], ['exit', 'exit']]} />
        <${Select} label=${`Step ${i + 1} on timeout`} value=${step.on_timeout} onChange=${upd('on_timeout')} error=${err('on_timeout')}
          options=${[['', 'continue'], ['exit', 'exit']]} />`;
      break;
  }
  const rest = otherErrors(error, `/steps/${i}`, shown);
  const typeLabel = (stepTypes.find(([t]) => t === step.type) || [step.type, step.type])[1];
  return html`<li class="step" data-step=${i}>
    <fieldset>
      <legend>Step ${i + 1}: ${typeLabel}</legend>
      ${body}
      ${rest.map((d) => html`<p class="field-error">${d}</p>`)}
      <div class="actions">
        <button type="button" class="secondary" aria-disabled=${i === 0 ? 'true' : undefined} onClick=${() => i > 0 && move(-1)} aria-label=${`Move step ${i + 1} up`}>Move up</button>
        <button type="button" class="secondary" aria-disabled=${i === count - 1 ? 'true' : undefined} onClick=${() => i < count - 1 && move(1)} aria-label=${`Move step ${i + 1} down`}>Move down</button>
        <button type="button" class="danger" onClick=${remove} aria-label=${`Remove step ${i + 1}`}>Remove</button>
      </div>
    </fieldset>
  </li>`;
}

/**
 * Creates a sequence (no `sequence`) or replaces one's definition.
 * @param {{sequence?:any, onSaved:(s:any)=>void}} p
 */
export function SequenceForm({ sequence, onSaved }) {
  const [templates] = useLoad(() => api('GET', '/v1/templates?limit=200'));
  const [lists] = useLoad(() => api('GET', '/v1/lists?limit=200'));
  const [senders] = useLoad(() => api('GET', '/v1/senders?limit=200'));
  const [pools] = useLoad(() => api('GET', '/v1/sender-pools?limit=200'));
  const [segments] = useLoad(() => api('GET', '/v1/segments?limit=200'));
  const s = sequence || { name: '', trigger: { type: 'manual' }, time_zone: '', late_after: '', steps: [] };
  const t = s.trigger;
  const [f, setF] = useState({
    name: s.name, type: t.type, list_id: t.list_id ? String(t.list_id) : '', event: t.event || '', attribute: t.attribute || '',
    offset_days: t.offset_days ? String(t.offset_days) : '', at: t.at || '', time_zone: s.time_zone || '', late_after: s.late_after || '',
    segment_id: t.segment_id ? String(t.segment_id) : '', reentry: s.reentry || 'never', reentry_after: s.reentry_after || '',
  });
  const [steps, setSteps] = useState(/** @type {FormStep[]} */ (s.steps.map((/** @type {any} */ x) => formStep(x.type, x))));
  const [addType, setAddType] = useState('send');
  const [error, setError] = useState(/** @type {any} */ (null));
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const set = (/** @type {string} */ k) => (/** @type {string} */ v) => setF({ ...f, [k]: v });
  // Where the keyboard's focus goes once the steps have re-rendered: after a move,
  // the moved step's same button (or the other one, at an end); after a removal,
  // the step now in its place, else the new step's type. A move button at an end
  // is aria-disabled, not disabled: a focused button that becomes disabled loses
  // the focus to the page, wherever the script puts it.
  const form = useRef(/** @type {HTMLFormElement|null} */ (null));
  // A layout effect runs as soon as the steps are in the page: a deferred effect
  // could still be pending when the next key press arrives, and act on stale steps.
  const [focus, setFocus] = useState(/** @type {string[]} */ ([]));
  useLayoutEffect(() => {
    const root = form.current;
    if (!root || !focus.length) return;
    for (const sel of focus) {
      const el = /** @type {HTMLButtonElement|HTMLSelectElement|null} */ (root.querySelector(sel));
      if (el && !el.disabled && el.getAttribute('aria-disabled') !== 'true') { el.focus(); break; }
    }
    setFocus([]);
  }, [focus]);
  const move = (/** @type {number} */ i, /** @type {number} */ d) => {
    const next = [...steps];
    [next[i], next[i + d]] = [next[i + d], next[i]];
    setSteps(next);
    setNote(`Step ${i + 1} is now step ${i + d + 1}.`);
    const n = i + d + 1;
    setFocus([`[aria-label="Move step ${n} ${d < 0 ? 'up' : 'down'}"]`, `[aria-label="Move step ${n} ${d < 0 ? 'down' : 'up'}"]`]);
  };
  const remove = (/** @type {number} */ i) => {
    setSteps(steps.filter((_, j) => j !== i));
    setNote(`Step ${i + 1} removed.`);
    setFocus([`[aria-label="Remove step ${i + 1}"]`, `[aria-label="Remove step ${i}"]`, '.add-step select']);
  };
  const submit = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    setNote('');
    /** @type {any} */
    const trigger = { type: f.type };
    if (f.list_id) trigger.list_id = Number(f.list_id);
    if (f.type === 'event') trigger.event = f.event;
    if (f.type === 'segment_entered' && f.segment_id) trigger.segment_id = Number(f.segment_id);
    if (f.type === 'date_attribute') {
      trigger.attribute = f.attribute;
      if (f.offset_days) trigger.offset_days = Number(f.offset_days);
      if (f.at) trigger.at = f.at;
    }
    /** @type {any} */
    const body = { name: f.name, trigger, steps: steps.map(apiStep) };
    if (f.time_zone) body.time_zone = f.time_zone;
    if (f.late_after) body.late_after = f.late_after;
    if (f.reentry !== 'never') body.reentry = f.reentry;
    if (f.reentry === 'after_exit' && f.reentry_after) body.reentry_after = f.reentry_after;
    setBusy(true);
    try {
      onSaved(await api(sequence ? 'PUT' : 'POST', sequence ? '/v1/sequences/' + sequence.id : '/v1/sequences', body));
    } catch (err) { setError(err); }
    setBusy(false);
  };
  const refs = { templates, lists, senders, pools, segments };
  const listNeeded = f.type === 'list_joined' || f.type === 'confirmed';
  return html`<form ref=${form} onSubmit=${submit} class="form sequence-form" aria-label=${sequence ? 'Edit the sequence' : 'New sequence'} novalidate>
    <${Field} label="Sequence name" value=${f.name} onInput=${set('name')} required error=${fieldError(error, '/name')} />
    <fieldset><legend>Trigger</legend>
      <${Select} label="Trigger" value=${f.type} onChange=${set('type')} error=${fieldError(error, '/trigger/type') || fieldError(error, '/trigger')} options=${triggerTypes} />
      <${Select} label=${listNeeded ? 'List' : 'Only members of the list'} value=${f.list_id} onChange=${set('list_id')} error=${fieldError(error, '/trigger/list_id')}
        options=${choices(lists, listNeeded ? 'Choose a list' : 'No list: every subscriber')} />
      ${!listNeeded && html`<p class="hint">A list also scopes the sequence's mail: leaving it stops the sends.</p>`}
      ${f.type === 'segment_entered' && html`<${Select} label="Segment" value=${f.segment_id} onChange=${set('segment_id')} error=${fieldError(error, '/trigger/segment_id')}
        options=${choices(segments, 'Choose a segment')} />`}
      ${f.type === 'event' && html`<${Field} label="Event name" value=${f.event} onInput=${set('event')} error=${fieldError(error, '/trigger/event')} hint="The name your application tracks (POST /v1/track)." />`}
      ${f.type === 'date_attribute' && html`
        <${Field} label="Date attribute" value=${f.attribute} onInput=${set('attribute')} error=${fieldError(error, '/trigger/attribute')} hint="An attribute holding a YYYY-MM-DD date, e.g. birthday." />
        <${Field} label="Days after the date" type="number" value=${f.offset_days} onInput=${set('offset_days')} error=${fieldError(error, '/trigger/offset_days')} hint="Negative: before it. -366 to 366." />
        <${Field} label="At (time of day)" value=${f.at} onInput=${set('at')} error=${fieldError(error, '/trigger/at')} hint="HH:MM in the sequence's time zone; empty: 09:00." />`}
    </fieldset>
    <${Field} label="Time zone" value=${f.time_zone} onInput=${set('time_zone')} error=${fieldError(error, '/time_zone')} hint="IANA, e.g. Europe/Paris; empty: UTC. A subscriber's attributes.timezone wins." />
    <${Field} label="Too late after" value=${f.late_after} onInput=${set('late_after')} error=${fieldError(error, '/late_after')} hint="A send reached this long after it fell due (downtime, a pause) is skipped; empty: never too late." />
    <${Select} label="Runs per subscriber" value=${f.reentry} onChange=${set('reentry')} error=${fieldError(error, '/reentry')}
      options=${[['never', 'once'], ['after_exit', 'again after a run ends (event and manual triggers)']]} />
    ${f.reentry === 'after_exit' && html`<${Field} label="Least time between runs" value=${f.reentry_after} onInput=${set('reentry_after')} error=${fieldError(error, '/reentry_after')}
      hint="From the end of a run to the trigger that starts the next: 90m, 72h, 3d; empty: no gap." />`}
    <h3>Steps</h3>
    ${fieldError(error, '/steps') && html`<p class="field-error">${fieldError(error, '/steps')}</p>`}
    ${steps.length === 0 && html`<p>No steps yet: add the first below.</p>`}
    <ol class="steps">
      ${steps.map((st, i) => html`<${StepEditor} key=${st.key} step=${st} i=${i} count=${steps.length} error=${error} refs=${refs}
        earlier=${earlierSends(steps, i, templates)}
        set=${(/** @type {FormStep} */ n) => setSteps(steps.map((x, j) => (j === i ? n : x)))}
        move=${(/** @type {number} */ d) => move(i, d)}
        remove=${() => remove(i)} />`)}
    </ol>
    <div class="inline add-step">
      <${Select} label="New step" value=${addType} onChange=${setAddType} options=${stepTypes} />
      <button type="button" class="secondary" onClick=${() => { setSteps([...steps, formStep(addType)]); setNote(`Step ${steps.length + 1} added.`); }}>Add step</button>
    </div>
    <p role="status" class="sr-only">${note}</p>
    <${ErrorBox} error=${error} />
    <button type="submit" class="primary" disabled=${busy}>${sequence ? 'Save sequence' : 'Create sequence'}</button>
  </form>`;
}
