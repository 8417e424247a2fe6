// Small shared pieces: labelled fields that show the API's error for their
// field, problem messages in words, empty states, formatting.
import { html, useState, useEffect, useRef } from './preact-htm.js';
import { Problem } from './api.js';

let nextId = 0;
/** A unique id for a label's for=. */
export function useId(prefix = 'f') {
  const ref = useRef('');
  if (!ref.current) ref.current = `${prefix}-${++nextId}`;
  return ref.current;
}

/**
 * A labelled input; `error` is the API's detail for this field.
 * @param {{label:string, value:any, onInput:(v:string)=>void, type?:string, error?:string, hint?:string, required?:boolean, textarea?:boolean, rows?:number, name?:string, autocomplete?:string, placeholder?:string}} p
 */
export function Field(p) {
  const id = useId('field');
  const err = p.error ? `${id}-err` : undefined;
  const hint = p.hint ? `${id}-hint` : undefined;
  const described = [hint, err].filter(Boolean).join(' ') || undefined;
  const common = {
    id, name: p.name, value: p.value, required: p.required, placeholder: p.placeholder,
    'aria-invalid': p.error ? 'true' : undefined, 'aria-describedby': described,
    autocomplete: p.autocomplete, onInput: (/** @type {any} */ e) => p.onInput(e.currentTarget.value),
  };
  return html`<div class="field">
    <label for=${id}>${p.label}</label>
    ${p.textarea ? html`<textarea rows=${p.rows || 4} ...${common}></textarea>` : html`<input type=${p.type || 'text'} ...${common} />`}
    ${p.hint && html`<small id=${hint}>${p.hint}</small>`}
    ${p.error && html`<p class="field-error" id=${err}>${p.error}</p>`}
  </div>`;
}

/** @param {{label:string, value:any, onChange:(v:string)=>void, options:Array<[string,string]>, error?:string}} p */
export function Select(p) {
  const id = useId('select');
  return html`<div class="field">
    <label for=${id}>${p.label}</label>
    <select id=${id} value=${p.value} onChange=${(/** @type {any} */ e) => p.onChange(e.currentTarget.value)}>
      ${p.options.map(([v, l]) => html`<option value=${v} selected=${String(v) === String(p.value)}>${l}</option>`)}
    </select>
    ${p.error && html`<p class="field-error">${p.error}</p>`}
  </div>`;
}

/**
 * The words for an error: the API's detail, with what a conflict means.
 * @param {any} e
 */
export function explain(e) {
  if (e instanceof Problem) {
    if (e.status === 409 && e.body.current_status) {
      return `${e.message}. Someone or something changed it meanwhile: it is now ${e.body.current_status}. The page shows its current state.`;
    }
    if (e.status === 401) return 'Your session has ended; sign in again.';
    if (e.status === 429) return `${e.message} (too many requests; wait a moment).`;
    return e.message;
  }
  return String(e && e.message || e);
}

/**
 * Where a field error is, in words: the label of the field it names when the page
 * gave one, else the pointer read aloud ("/emails/1" is "emails, item 2").
 * @param {string} pointer @param {Record<string,string>|undefined} labels
 */
export function fieldName(pointer, labels) {
  if (labels && labels[pointer]) return labels[pointer];
  const parts = pointer.replace(/^\//, '').split('/').filter(Boolean);
  if (parts.length === 0) return 'the request';
  return parts.map((p) => (/^\d+$/.test(p) ? `item ${Number(p) + 1}` : p.replace(/_/g, ' '))).join(', ');
}

/**
 * A problem, in words, with each field it names and what is wrong there (so a
 * field the form does not show is never lost). It takes the focus when it appears,
 * so a keyboard or screen-reader user lands on it after a refused submit.
 * A box that comes and goes as something is typed (a live preview's) passes quiet:
 * it must not take the focus from the field being typed in.
 * @param {{error:any, labels?:Record<string,string>, quiet?:boolean}} p
 */
export function ErrorBox({ error, labels, quiet }) {
  const ref = useRef(/** @type {HTMLDivElement|null} */ (null));
  useEffect(() => { if (error && ref.current && !quiet) ref.current.focus(); }, [error]);
  if (!error) return null;
  const fields = error instanceof Problem ? Object.entries(error.fields) : [];
  return html`<div class="error" role="alert" tabindex="-1" ref=${ref}>
    <p>${explain(error)}</p>
    ${fields.length > 0 && html`<ul class="field-errors">${fields.map(([ptr, detail]) => html`<li key=${ptr} data-pointer=${ptr}><strong>${fieldName(ptr, labels)}</strong>: ${detail}</li>`)}</ul>`}
  </div>`;
}

/** @param {any} error @param {string} pointer */
export function fieldError(error, pointer) {
  return error instanceof Problem ? error.fields[pointer] : undefined;
}

/** @param {{title:string, children?:any}} p */
export function Empty({ title, children }) {
  return html`<div class="empty"><p><strong>${title}</strong></p>${children}</div>`;
}

const shortTime = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' });
const exactTime = new Intl.DateTimeFormat('en', { dateStyle: 'full', timeStyle: 'long' });
const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
/** @type {Array<[Intl.RelativeTimeFormatUnit, number]>} */
const units = [['second', 60], ['minute', 60], ['hour', 24], ['day', 7]];

/**
 * How long ago (or how soon) d is from now, in words, within a week ("3 minutes
 * ago", "in 2 hours", "yesterday"); null beyond, where a date reads better.
 * @param {Date} d @param {number} [now]
 */
export function ago(d, now = Date.now()) {
  let v = (d.getTime() - now) / 1000;
  if (Math.abs(v) < 45) return 'just now';
  for (const [unit, size] of units) {
    if (Math.abs(v) < size) return relative.format(Math.round(v), unit);
    v /= size;
  }
  return null;
}

/**
 * A moment, as every table and page shows one: a <time> element that reads
 * relatively within a week ("5 minutes ago") and as a date in the browser's time
 * zone beyond (the zone named on the page's footer), with the exact time and zone
 * on hover (its title) and the instant in its datetime.
 * @param {string|null|undefined} t
 */
export function when(t) {
  if (!t) return '—';
  const d = new Date(t);
  if (isNaN(d.getTime())) return String(t);
  return html`<time datetime=${d.toISOString()} title=${exactTime.format(d)}>${ago(d) || shortTime.format(d)}</time>`;
}

/** The browser's time zone, which every time on the pages is in. */
export const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';

/**
 * "1 member", "2 members", "1,024 members".
 * @param {number} n @param {string} one @param {string} [many]
 */
export function plural(n, one, many) {
  return `${num(n)} ${n === 1 ? one : many || one + 's'}`;
}

/** @param {{what?:string}} p */
export function NotFound({ what }) {
  return html`<h1>Not found</h1>
    <p>${what ? `There is no ${what} here.` : 'There is no page at this address.'} <a href="#/overview">Go to the overview</a>.</p>`;
}

/** @param {number} n */
export function num(n) { return (n || 0).toLocaleString('en'); }

/**
 * Loads once (and again when deps change); returns [data, error, reload].
 * @template T
 * @param {() => Promise<T>} load
 * @param {any[]} deps
 * @returns {[T|undefined, any, () => void]}
 */
export function useLoad(load, deps = []) {
  const [state, setState] = useState(/** @type {{data?:T, error?:any}} */ ({}));
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    load().then((data) => live && setState({ data }), (error) => live && setState({ error }));
    return () => { live = false; };
  }, [...deps, tick]);
  return [state.data, state.error, () => setTick((t) => t + 1)];
}

/** @param {string} s */
export function go(s) { location.hash = s; }

/**
 * A page's header: its title, and on the right its actions (the view's primary
 * action, class "primary", first among them).
 * @param {{title:any, children?:any}} p
 */
export function PageHeader({ title, children }) {
  return html`<div class="page-head"><h1>${title}</h1>${children && html`<div class="page-actions">${children}</div>`}</div>`;
}

/** @type {Set<(list: Array<{id:number, text:string}>) => void>} */
const toastWatchers = new Set();
/** @type {Array<{id:number, text:string}>} */
let toastList = [];
let toastId = 0;

/**
 * Says a success in a toast for a few seconds (announced by the live region the
 * shell keeps on every page): "Segment saved.", "Campaign approved."
 * @param {string} text
 */
export function toast(text) {
  const id = ++toastId;
  toastList = [...toastList, { id, text }].slice(-3);
  toastWatchers.forEach((w) => w(toastList));
  setTimeout(() => {
    toastList = toastList.filter((x) => x.id !== id);
    toastWatchers.forEach((w) => w(toastList));
  }, 6000);
}

/**
 * The toasts' live region: always on the page (a region that appears with its
 * first message is not announced), polite, each toast a paragraph in it.
 */
export function Toasts() {
  const [list, setList] = useState(toastList);
  useEffect(() => {
    toastWatchers.add(setList);
    return () => { toastWatchers.delete(setList); };
  }, []);
  return html`<div class="toasts" role="status" aria-live="polite">
    ${list.map((x) => html`<p class="toast" key=${x.id}>${x.text}</p>`)}
  </div>`;
}
