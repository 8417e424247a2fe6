// The media picker of the editors: a modal dialog that picks an image of the
// library, or uploads one into it, and hands back what inserts it: an HTML
// <img> with its alt text, or Markdown ![alt](url).
import { html, useState, useEffect, useRef } from './preact-htm.js';
import { api, upload } from './api.js';
import { ErrorBox, useId } from './ui.js';
import { can } from './perm.js';
import { local } from './media.js';

/** Text safe inside a double-quoted HTML attribute. @param {string} s */
function attr(s) {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

/**
 * What inserts the image m with alt text alt into content of the format.
 * @param {any} m @param {string} alt @param {'html'|'markdown'} format
 */
export function imageSnippet(m, alt, format) {
  if (format === 'markdown') return `![${alt.replace(/[[\]\\]/g, '\\$&')}](${m.url})`;
  return `<img src="${attr(m.url)}" alt="${attr(alt)}" width="${m.width}" height="${m.height}" style="max-width:100%;height:auto">`;
}

/** value with snippet added at its end, on a line of its own. @param {string} value @param {string} snippet */
export function appendLine(value, snippet) {
  return value + (value && !value.endsWith('\n') ? '\n' : '') + snippet + '\n';
}

/**
 * The "Insert image" button and its dialog.
 * @param {{format:'html'|'markdown', onInsert:(snippet:string)=>void, label?:string}} p
 */
export function MediaPicker({ format, onInsert, label }) {
  const ref = useRef(/** @type {HTMLDialogElement|null} */ (null));
  const [open, setOpen] = useState(false);
  const [images, setImages] = useState(/** @type {any[]|null} */ (null));
  const [chosen, setChosen] = useState(/** @type {any} */ (null));
  const [alt, setAlt] = useState('');
  const [error, setError] = useState(/** @type {any} */ (null));
  const [busy, setBusy] = useState(false);
  const titleId = useId('picker-title');
  const fileId = useId('picker-file');
  const altId = useId('picker-alt');
  const writer = can('templates:write');
  const load = () => api('GET', '/v1/media?limit=48').then((r) => setImages(r.data || []), (err) => { setImages([]); setError(err); });
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) { d.showModal(); load(); }
    if (!open && d.open) d.close();
  }, [open]);
  const close = () => { setOpen(false); setChosen(null); setAlt(''); setError(null); };
  const send = async (/** @type {Event} */ e) => {
    e.preventDefault();
    const input = /** @type {HTMLInputElement} */ (document.getElementById(fileId));
    const file = input.files && input.files[0];
    if (!file) return;
    setError(null);
    setBusy(true);
    try {
      const m = await upload('/v1/media?name=' + encodeURIComponent(file.name), file, () => {}, 'application/octet-stream');
      input.value = '';
      setChosen(m);
      await load();
    } catch (err) { setError(err); } finally { setBusy(false); }
  };
  const insert = (/** @type {Event} */ e) => {
    e.preventDefault();
    if (!chosen || !alt.trim()) return;
    onInsert(imageSnippet(chosen, alt.trim(), format));
    close();
  };
  return html`<button type="button" onClick=${() => setOpen(true)} aria-haspopup="dialog">${label || 'Insert image'}</button>
    <dialog ref=${ref} class="confirm media-picker" aria-labelledby=${titleId} onClose=${close}>
      <h2 id=${titleId}>Insert an image</h2>
      <${ErrorBox} error=${error} />
      ${writer && html`<form onSubmit=${send} class="inline" aria-label="Upload into the library">
        <div class="field"><label for=${fileId}>Upload an image</label>
          <input id=${fileId} type="file" accept="image/png,image/jpeg,image/gif,image/webp" required />
          <small>PNG, JPEG, GIF or WebP, at most 5 MB.</small></div>
        <button type="submit" disabled=${busy}>${busy ? 'Uploading…' : 'Upload'}</button>
      </form>`}
      ${images === null && html`<p>Loading the library…</p>`}
      ${images && images.length === 0 && html`<p>The library is empty${writer ? ': upload an image above' : ''}.</p>`}
      ${images && images.length > 0 && html`<ul class="media-grid" aria-label="Library">
        ${images.map((m) => html`<li key=${m.id}>
          <button type="button" class=${'pick' + (chosen && chosen.id === m.id ? ' chosen' : '')} aria-pressed=${chosen && chosen.id === m.id ? 'true' : 'false'}
            onClick=${() => { setChosen(m); if (!alt) setAlt(m.name.replace(/\.[a-z0-9]+$/i, '')); }}>
            <img src=${local(m.thumbnail_url)} alt="" loading="lazy" />
            <span>${m.name}</span><span class="sr-only">, ${m.width} by ${m.height} pixels</span>
          </button></li>`)}
      </ul>`}
      <form onSubmit=${insert} aria-label="Insert the chosen image">
        <div class="field"><label for=${altId}>Alt text</label>
          <input id=${altId} value=${alt} required onInput=${(/** @type {any} */ e) => setAlt(e.currentTarget.value)} aria-describedby=${altId + '-hint'} />
          <small id=${altId + '-hint'}>What the image says to someone who cannot see it.</small></div>
        <p role="status">${chosen ? `Chosen: ${chosen.name}` : 'Choose an image of the library.'}</p>
        <div class="actions">
          <button type="submit" class="primary" disabled=${!chosen}>Insert</button>
          <button type="button" onClick=${close}>Cancel</button>
        </div>
      </form>
    </dialog>`;
}
