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

/** @param {{error:any}} p */
export function ErrorBox({ error }) {
  if (!error) return null;
  const fields = error instanceof Problem ? Object.keys(error.fields) : [];
  return html`<div class="error" role="alert">
    <p>${explain(error)}</p>
    ${fields.length > 0 && html`<p>See the fields marked below.</p>`}
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

/** @param {string|null|undefined} t */
export function when(t) {
  if (!t) return '—';
  const d = new Date(t);
  return d.toLocaleString();
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
