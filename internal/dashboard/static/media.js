// The media library: images for campaigns and templates, uploaded here (checked
// and re-encoded by the API), each with a public address to copy into content.
import { html, useState } from './preact-htm.js';
import { api, upload } from './api.js';
import { ErrorBox, Empty, when, PageHeader, toast, useId } from './ui.js';
import { usePaged, Pager } from './pager.js';
import { can } from './perm.js';

/** A byte count in words. @param {number} n */
function size(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** The path of a public address: the page loads images from its own origin (its CSP). @param {string} url */
export function local(url) {
  try { return new URL(url).pathname; } catch { return url; }
}

export function Media() {
  const paged = usePaged('/v1/media?limit=48');
  const { page, error, reload } = paged;
  const [busy, setBusy] = useState(false);
  const [uploadError, setUploadError] = useState(/** @type {any} */ (null));
  const [deleteError, setDeleteError] = useState(/** @type {any} */ (null));
  const fileId = useId('media-file');
  const writer = can('templates:write');

  const send = async (/** @type {Event} */ e) => {
    e.preventDefault();
    const input = /** @type {HTMLInputElement} */ (document.getElementById(fileId));
    const file = input.files && input.files[0];
    if (!file) return;
    setUploadError(null);
    setBusy(true);
    try {
      const m = await upload('/v1/media?name=' + encodeURIComponent(file.name), file, () => {}, 'application/octet-stream');
      toast(`${m.name} is in the library.`);
      input.value = '';
      reload();
    } catch (err) {
      setUploadError(err);
    } finally {
      setBusy(false);
    }
  };
  const copy = async (/** @type {any} */ m) => {
    try { await navigator.clipboard.writeText(m.url); toast(`Address of ${m.name} copied.`); } catch { toast(m.url); }
  };
  const remove = async (/** @type {any} */ m) => {
    if (!confirm(`Delete ${m.name}? Drafts that show it will show a broken image.`)) return;
    setDeleteError(null);
    try { await api('DELETE', '/v1/media/' + m.id); toast(`${m.name} deleted.`); } catch (err) { setDeleteError(err); }
    reload();
  };
  return html`<${PageHeader} title="Media" />
    <p>Images for campaigns and templates. Copy an image's address into an <code>img</code> tag; an image a sent campaign shows cannot be deleted.</p>
    ${writer && html`<form onSubmit=${send} class="inline" aria-describedby="media-rules">
      <div class="field">
        <label for=${fileId}>Image</label>
        <input id=${fileId} type="file" accept="image/png,image/jpeg,image/gif,image/webp" required
          aria-invalid=${uploadError ? 'true' : undefined} />
        <small id="media-rules">PNG, JPEG, GIF or WebP, at most 5 MB. SVG is not accepted.</small>
      </div>
      <button type="submit" class="primary" disabled=${busy}>${busy ? 'Uploading…' : 'Upload'}</button>
    </form>`}
    <${ErrorBox} error=${uploadError} />
    <${ErrorBox} error=${deleteError} />
    <${ErrorBox} error=${error} />
    ${page && page.data.length === 0 && html`<${Empty} title="No images yet."><p>${writer ? 'Upload one above.' : 'Someone who edits templates can upload them.'}</p></${Empty}>`}
    ${page && page.data.length > 0 && html`<ul class="media-grid" aria-label="Images">
      ${page.data.map((/** @type {any} */ m) => html`<li key=${m.id}>
        <figure>
          <img src=${local(m.thumbnail_url)} alt=${m.name} loading="lazy" />
          <figcaption><strong>${m.name}</strong><br />${m.width}×${m.height} · ${size(m.size)} · ${when(m.created_at)}</figcaption>
        </figure>
        <button type="button" class="link" data-reads onClick=${() => copy(m)} aria-label=${'Copy the address of ' + m.name}>Copy address</button>
        ${writer && html` <button type="button" class="link danger" onClick=${() => remove(m)} aria-label=${'Delete ' + m.name}>Delete</button>`}
      </li>`)}
    </ul>`}
    <${Pager} paged=${paged} label="Images" />`;
}
