// The visual block builder: edits a block design (content_type "blocks", see
// docs/content.md#blocks) as rows of columns holding blocks. Blocks are added,
// removed and reordered with buttons (keyboard) or by dragging, and each move is
// announced in a live region. The server renders the design; this module only
// edits the JSON, so what the preview shows is what is sent.
import { html, useState, useEffect } from './preact-htm.js';
import { api } from './api.js';
import { Field, Select, fieldError, explain } from './ui.js';

/** The block types offered, with their labels. @type {Array<[string,string]>} */
const TYPES = [['heading', 'Heading'], ['text', 'Text'], ['button', 'Button'], ['image', 'Image'], ['divider', 'Divider'],
  ['spacer', 'Spacer'], ['social', 'Social links'], ['footer', 'Footer with unsubscribe link']];
const LABEL = Object.fromEntries(TYPES);
const NETWORKS = ['facebook', 'x', 'instagram', 'linkedin', 'youtube', 'tiktok', 'mastodon', 'github', 'bluesky', 'website'];
const ALIGN = /** @type {Array<[string,string]>} */ ([['', 'Default'], ['left', 'Left'], ['center', 'Centre'], ['right', 'Right']]);

/** A new block of type t, with what it needs to render. @param {string} t @returns {any} */
function newBlock(t) {
  switch (t) {
    case 'heading': return { type: t, text: 'Heading', level: 1 };
    case 'text': return { type: t, text: 'Text' };
    case 'button': return { type: t, text: 'Read more', url: '' };
    case 'image': return { type: t, src: '', alt: '' };
    case 'social': return { type: t, links: [{ network: 'website', url: '' }] };
    case 'footer': return { type: t, text: '' };
    default: return { type: t };
  }
}

/** An empty design: one row of one column with a heading, a text and a footer. */
export function emptyDesign() {
  return { rows: [{ columns: [{ blocks: [newBlock('heading'), newBlock('text'), newBlock('footer')] }] }] };
}

/** A short name of a block for lists and announcements. @param {any} b */
function blockName(b) {
  const t = LABEL[b.type] || b.type;
  const s = b.text || b.alt || '';
  return s ? `${t}: ${s.length > 40 ? s.slice(0, 40) + '…' : s}` : t;
}

/** @template T @param {T[]} a @param {number} from @param {number} to @returns {T[]} */
function move(a, from, to) {
  const out = a.slice();
  const [x] = out.splice(from, 1);
  out.splice(to, 0, x);
  return out;
}

/**
 * The builder.
 * @param {{design:any, onChange:(d:any)=>void, error?:any}} p
 */
export function Builder({ design, onChange, error }) {
  const d = design && Array.isArray(design.rows) ? design : emptyDesign();
  const [said, setSaid] = useState('');
  const [drag, setDrag] = useState(/** @type {any} */ (null));
  const [adding, setAdding] = useState(/** @type {Record<string,string>} */ ({}));
  // After a move by keyboard the focus follows the block to its new place.
  const [focus, setFocus] = useState('');
  useEffect(() => {
    if (!focus) return;
    const [at, dir] = focus.split(' ');
    const el = /** @type {HTMLButtonElement|null} */ (document.querySelector(`[data-move="${at} ${dir}"]`));
    const other = /** @type {HTMLButtonElement|null} */ (document.querySelector(`[data-move="${at} ${dir === 'up' ? 'down' : 'up'}"]`));
    if (el && !el.disabled) el.focus(); else if (other) other.focus();
    setFocus('');
  }, [focus]);
  /** @param {(rows:any[])=>any[]} f @param {string} [note] */
  const rows = (f, note) => { onChange({ ...d, rows: f(d.rows) }); if (note) setSaid(note); };
  /** @param {number} ri @param {number} ci @param {(blocks:any[])=>any[]} f @param {string} [note] */
  const blocks = (ri, ci, f, note) => rows((rs) => rs.map((r, i) => i !== ri ? r
    : { ...r, columns: r.columns.map((/** @type {any} */ c, j) => j !== ci ? c : { ...c, blocks: f(c.blocks || []) }) }), note);
  /** @param {number} ri @param {number} n */
  const setColumns = (ri, n) => rows((rs) => rs.map((r, i) => {
    if (i !== ri) return r;
    const cols = r.columns.map((/** @type {any} */ c) => ({ blocks: c.blocks || [] }));
    while (cols.length < n) cols.push({ blocks: [] });
    // Blocks of columns taken away go to the last column kept.
    const kept = cols.slice(0, n);
    kept[n - 1] = { blocks: [...kept[n - 1].blocks, ...cols.slice(n).flatMap((c) => c.blocks)] };
    return { ...r, columns: kept };
  }), `Row ${ri + 1} has ${n} column${n > 1 ? 's' : ''}.`);
  const ptr = (/** @type {number} */ ri, /** @type {number} */ ci, /** @type {number} */ bi) => `/blocks/rows/${ri}/columns/${ci}/blocks/${bi}`;
  const err = (/** @type {string} */ p) => fieldError(error, p);
  /** The fields of one block. @param {any} b @param {string} p @param {(b:any)=>void} set */
  const fields = (b, p, set) => {
    const f = (/** @type {string} */ k) => (/** @type {any} */ v) => set({ ...b, [k]: v });
    const num = (/** @type {string} */ k) => (/** @type {string} */ v) => { const n = parseInt(v, 10); const o = { ...b }; if (isNaN(n)) delete o[k]; else o[k] = n; set(o); };
    const text = (/** @type {string} */ label, long = false, k = 'text') => html`<${Field} label=${label} textarea=${long} rows=${3} value=${b[k] || ''} onInput=${f(k)} error=${err(p + '/' + k)} />`;
    const url = (/** @type {string} */ label, k = 'url') => html`<${Field} label=${label} type="text" value=${b[k] || ''} onInput=${f(k)} error=${err(p + '/' + k)} hint="A full address starting with https:, or a template action such as {{.UnsubscribeURL}}" />`;
    const align = html`<${Select} label="Alignment" value=${b.align || ''} onChange=${f('align')} options=${ALIGN} error=${err(p + '/align')} />`;
    switch (b.type) {
      case 'heading': return html`${text('Heading text')}<${Select} label="Level" value=${String(b.level || 1)} onChange=${num('level')}
        options=${[['1', 'Heading 1'], ['2', 'Heading 2'], ['3', 'Heading 3']]} error=${err(p + '/level')} />${align}`;
      case 'text': return html`${text('Text (a blank line starts a paragraph)', true)}${align}`;
      case 'button': return html`${text('Button text')}${url('Link')}${align}`;
      case 'image': return html`${url('Image address', 'src')}${text('Alternative text (what the image shows)', false, 'alt')}${url('Link (optional)')}
        <${Field} label="Width in pixels (optional)" type="number" value=${b.width ? String(b.width) : ''} onInput=${num('width')} error=${err(p + '/width')} />${align}`;
      case 'divider': return html`<${Field} label="Thickness in pixels (1–10)" type="number" value=${b.height ? String(b.height) : ''} onInput=${num('height')} error=${err(p + '/height')} />`;
      case 'spacer': return html`<${Field} label="Height in pixels (4–200)" type="number" value=${b.height ? String(b.height) : ''} onInput=${num('height')} error=${err(p + '/height')} />`;
      case 'footer': return html`${text('Footer text (address, why they get this)', true)}${text('Unsubscribe link text', false, 'unsubscribe')}${align}`;
      case 'social': {
        const links = b.links || [];
        const setLinks = (/** @type {any[]} */ l) => set({ ...b, links: l });
        return html`<fieldset><legend>Links</legend>${links.map((/** @type {any} */ l, i) => html`<div class="builder-link" key=${i}>
          <${Select} label=${`Network ${i + 1}`} value=${l.network} onChange=${(/** @type {string} */ v) => setLinks(links.map((x, j) => j === i ? { ...x, network: v } : x))}
            options=${NETWORKS.map((n) => [n, n])} error=${err(`${p}/links/${i}/network`)} />
          <${Field} label=${`Address ${i + 1}`} value=${l.url} onInput=${(/** @type {string} */ v) => setLinks(links.map((x, j) => j === i ? { ...x, url: v } : x))} error=${err(`${p}/links/${i}/url`)} />
          <button type="button" class="link danger" onClick=${() => setLinks(links.filter((_x, j) => j !== i))}>Remove link ${i + 1}</button></div>`)}
          <button type="button" onClick=${() => setLinks([...links, { network: 'website', url: '' }])}>Add a link</button></fieldset>${align}`;
      }
      default: return null;
    }
  };
  return html`<div class="builder" data-builder>
    <p class="sr-only" aria-live="polite" role="status" data-builder-said>${said}</p>
    ${err('/blocks') && html`<p class="field-error">${err('/blocks')}</p>`}
    ${d.rows.map((/** @type {any} */ r, ri) => html`<section class="builder-row" key=${ri} aria-label=${`Row ${ri + 1}`}>
      <div class="builder-bar"><h3>Row ${ri + 1}</h3>
        <${Select} label=${`Columns of row ${ri + 1}`} value=${String(r.columns.length)} onChange=${(/** @type {string} */ v) => setColumns(ri, Number(v))} options=${[['1', '1'], ['2', '2'], ['3', '3']]} />
        <button type="button" disabled=${ri === 0} onClick=${() => rows((rs) => move(rs, ri, ri - 1), `Row ${ri + 1} moved up to position ${ri}.`)}>Move row ${ri + 1} up</button>
        <button type="button" disabled=${ri === d.rows.length - 1} onClick=${() => rows((rs) => move(rs, ri, ri + 1), `Row ${ri + 1} moved down to position ${ri + 2}.`)}>Move row ${ri + 1} down</button>
        <button type="button" class="danger" disabled=${d.rows.length === 1} onClick=${() => rows((rs) => rs.filter((_x, i) => i !== ri), `Row ${ri + 1} removed.`)}>Remove row ${ri + 1}</button></div>
      <div class="builder-columns">${r.columns.map((/** @type {any} */ c, ci) => {
        const where = r.columns.length > 1 ? ` in column ${ci + 1} of row ${ri + 1}` : ` in row ${ri + 1}`;
        const list = c.blocks || [];
        const key = ri + '.' + ci;
        return html`<div class="builder-column" key=${ci}>
          ${r.columns.length > 1 && html`<h4>Column ${ci + 1}</h4>`}
          <ol class="builder-blocks" aria-label=${'Blocks' + where}>${list.map((/** @type {any} */ b, bi) => html`<li key=${bi} class="builder-block"
              draggable="true" data-block=${b.type}
              onDragStart=${(/** @type {DragEvent} */ e) => { setDrag({ ri, ci, bi }); if (e.dataTransfer) { e.dataTransfer.effectAllowed = 'move'; e.dataTransfer.setData('text/plain', blockName(b)); } }}
              onDragOver=${(/** @type {DragEvent} */ e) => { if (drag && drag.ri === ri && drag.ci === ci) e.preventDefault(); }}
              onDrop=${(/** @type {DragEvent} */ e) => { e.preventDefault(); if (drag && drag.ri === ri && drag.ci === ci && drag.bi !== bi) blocks(ri, ci, (l) => move(l, drag.bi, bi), `${blockName(list[drag.bi])} moved to position ${bi + 1} of ${list.length}${where}.`); setDrag(null); }}
              onDragEnd=${() => setDrag(null)}>
            <details open>
              <summary><span aria-hidden="true" class="builder-grip">⠿</span> ${blockName(b)}</summary>
              ${fields(b, ptr(ri, ci, bi), (nb) => blocks(ri, ci, (l) => l.map((x, i) => i === bi ? nb : x)))}
            </details>
            <div class="builder-actions">
              <button type="button" disabled=${bi === 0} aria-label=${`Move ${blockName(b)} up`} data-move=${`${key}.${bi} up`}
                onClick=${() => { blocks(ri, ci, (l) => move(l, bi, bi - 1), `${blockName(b)} moved up to position ${bi} of ${list.length}${where}.`); setFocus(`${key}.${bi - 1} up`); }}>Up</button>
              <button type="button" disabled=${bi === list.length - 1} aria-label=${`Move ${blockName(b)} down`} data-move=${`${key}.${bi} down`}
                onClick=${() => { blocks(ri, ci, (l) => move(l, bi, bi + 1), `${blockName(b)} moved down to position ${bi + 2} of ${list.length}${where}.`); setFocus(`${key}.${bi + 1} down`); }}>Down</button>
              <button type="button" class="danger" aria-label=${`Remove ${blockName(b)}`}
                onClick=${() => blocks(ri, ci, (l) => l.filter((_x, i) => i !== bi), `${blockName(b)} removed${where}.`)}>Remove</button>
            </div>
            ${err(ptr(ri, ci, bi)) && html`<p class="field-error">${err(ptr(ri, ci, bi))}</p>`}
          </li>`)}</ol>
          <div class="builder-add">
            <${Select} label=${'New block' + where} value=${adding[key] || 'text'} onChange=${(/** @type {string} */ v) => setAdding({ ...adding, [key]: v })} options=${TYPES} />
            <button type="button" data-builder-add=${key} onClick=${() => { const t = adding[key] || 'text'; blocks(ri, ci, (l) => [...l, newBlock(t)], `${LABEL[t]} added at position ${list.length + 1}${where}.`); }}>Add block${where}</button>
          </div>
        </div>`;
      })}</div>
    </section>`)}
    <button type="button" onClick=${() => rows((rs) => [...rs, { columns: [{ blocks: [] }] }], `Row ${d.rows.length + 1} added.`)}>Add a row</button>
  </div>`;
}

/**
 * The live preview of a design: rendered by the API (nothing saved) in the
 * account's default layout a moment after an edit, with the sample subscriber.
 * @param {{subject:string, design:any}} p
 */
export function BlocksPreview({ subject, design }) {
  const [out, setOut] = useState(/** @type {any} */ (null));
  const [err, setErr] = useState(/** @type {any} */ (null));
  const key = JSON.stringify(design);
  useEffect(() => {
    let current = true;
    const t = setTimeout(() => {
      api('POST', '/v1/templates/preview', { subject: subject || ' ', content_type: 'blocks', blocks: design })
        .then((r) => { if (current) { setOut(r); setErr(null); } }, (e) => { if (current) { setErr(e); setOut(null); } });
    }, 300);
    return () => { current = false; clearTimeout(t); };
  }, [subject, key]);
  return html`<section aria-labelledby="blocks-preview" aria-live="polite" data-blocks-preview=${out ? 'ready' : undefined}>
    <h3 id="blocks-preview">Preview</h3>
    ${err && html`<p class="field-error">The design has an error: ${explain(err)}</p>`}
    ${!out && !err && html`<p>Rendering…</p>`}
    ${out && html`<iframe title="Preview of the blocks" sandbox="" srcdoc=${out.html}></iframe><pre class="source">${out.text}</pre>`}
  </section>`;
}
