import { html, useState, useEffect } from './preact-htm.js';
import { api, Problem } from './api.js';
import { Field, Select, ErrorBox, Empty, fieldError, when, PageHeader, toast } from './ui.js';
import { usePaged, Pager } from './pager.js';
import { Builder, emptyDesign } from './builder.js';
import { MediaPicker, appendLine } from './mediapicker.js';
import { ViewControls, Rendered, usePreviewView, subscriberData } from './preview.js';

/** @param {{label:string, value:string, onInput:(v:string)=>void, error?:string, line?:number}} p */
function Source({ label, value, onInput, error, line }) {
  return html`<div>
    <${Field} label=${label} textarea rows=${8} value=${value} onInput=${onInput} error=${error} />
    ${line && line > 0 && html`<pre class="source error-line" aria-label=${label + ' line ' + line}>${line}: ${value.split('\n')[line - 1] || ''}</pre>`}
  </div>`;
}

/** @param {any} error @param {string} pointer */
function lineOf(error, pointer) {
  return error instanceof Problem ? error.lines[pointer] : undefined;
}

/** The sample data as the editor shows it: a JSON object, pretty. @param {any} tpl */
function sampleOf(tpl) {
  return tpl && tpl.sample_data && Object.keys(tpl.sample_data).length ? JSON.stringify(tpl.sample_data, null, 2) : '{}';
}

/**
 * The sample data typed, or why it is not a JSON object.
 * @param {string} text @returns {{data?:any, error?:string}}
 */
function parseSample(text) {
  let data;
  try { data = JSON.parse(text || '{}'); } catch (err) { return { error: `Not valid JSON: ${err instanceof Error ? err.message : err}.` }; }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return { error: 'The sample data is a JSON object, such as {"plan": "pro"}.' };
  return { data };
}

/**
 * What the editor sends for its content: html and text, or Markdown with its
 * layout ('': the account's default layout, so layout_id is left out, or null
 * when the saved template names one: null clears it).
 * @param {any} f @param {any} [saved]
 */
function contentOf(f, saved) {
  if (f.content_type === 'blocks') {
    const c = /** @type {any} */ ({ content_type: 'blocks', blocks: f.blocks });
    if (f.layout_id) c.layout_id = Number(f.layout_id);
    else if (saved && saved.layout_id) c.layout_id = null;
    return c;
  }
  if (f.content_type !== 'markdown') return { content_type: 'html', html: f.html, text: f.text };
  const c = /** @type {any} */ ({ content_type: 'markdown', markdown: f.markdown });
  if (f.layout_id) c.layout_id = Number(f.layout_id);
  else if (saved && saved.layout_id) c.layout_id = null;
  return c;
}

/** @param {{tpl:any, onSaved:(t:any)=>void}} p */
function Editor({ tpl, onSaved }) {
  const [f, setF] = useState({ name: tpl ? tpl.name : '', subject: tpl ? tpl.subject : '', html: tpl ? tpl.html : '', text: tpl ? tpl.text : '',
    content_type: (tpl && tpl.content_type) || 'html', markdown: (tpl && tpl.markdown) || '', blocks: (tpl && tpl.blocks) || emptyDesign(), layout_id: tpl && tpl.layout_id ? String(tpl.layout_id) : '' });
  // The account's layouts, for the Markdown layout picker.
  const [layouts, setLayouts] = useState(/** @type {any[]} */ ([]));
  useEffect(() => { api('GET', '/v1/layouts?limit=100').then((r) => setLayouts(r.data || []), () => setLayouts([])); }, []);
  const markdown = f.content_type === 'markdown';
  const blocks = f.content_type === 'blocks';
  const [sample, setSample] = useState(sampleOf(tpl));
  const [error, setError] = useState(/** @type {any} */ (null));
  const [live, setLive] = useState(/** @type {any} */ (null));
  const [out, setOut] = useState(/** @type {any} */ (null));
  const [saved, setSaved] = useState(tpl && tpl.id ? tpl : null);
  const [note, setNote] = useState('');
  const [view, setView] = usePreviewView();
  // The subscriber the preview renders for (null: the sample data).
  const [asEmail, setAsEmail] = useState('');
  const [who, setWho] = useState(/** @type {any} */ (null));
  const [whoError, setWhoError] = useState(/** @type {any} */ (null));
  const set = (/** @type {string} */ k) => (/** @type {string} */ v) => { setF({ ...f, [k]: v }); setError(null); };
  const parsed = parseSample(sample);
  // The live preview: what the editor holds, rendered by the API (nothing saved) a
  // moment after the typing stops, with the sample data typed; its errors show at
  // their field and line.
  useEffect(() => {
    if (parsed.error) return;
    let current = true;
    const t = setTimeout(() => {
      const body = { subject: f.subject, ...contentOf(f), sample_data: parsed.data, ...(who || {}) };
      if (body.layout_id === null) delete body.layout_id;
      api('POST', '/v1/templates/preview', body).then((r) => { if (current) { setOut(r); setLive(null); } },
        (err) => { if (current) { setLive(err); setOut(null); } });
    }, 300);
    return () => { current = false; clearTimeout(t); };
  }, [f.subject, f.html, f.text, f.content_type, f.markdown, f.blocks, f.layout_id, sample, who]);
  const previewAs = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setWhoError(null);
    if (!asEmail) { setWho(null); return; }
    try { setWho(await subscriberData(asEmail)); } catch (err) { setWhoError(err); }
  };
  const save = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    setNote('');
    if (parsed.error) return;
    try {
      const body = { name: f.name, subject: f.subject, ...contentOf(f, saved), sample_data: parsed.data };
      const t = saved ? await api('PATCH', '/v1/templates/' + saved.id, body) : await api('POST', '/v1/templates', body);
      setSaved(t);
      setNote('Saved.');
      onSaved(t);
    } catch (err) { setError(err); }
  };
  const shown = error || live; // a save's refusal, else the live preview's
  return html`<form onSubmit=${save} class="form" aria-label="Template">
      <${Field} label="Name" value=${f.name} onInput=${set('name')} required error=${fieldError(error, '/name')} />
      <${Field} label="Subject" value=${f.subject} onInput=${set('subject')} required error=${fieldError(shown, '/subject')}
        hint="Go templates: {{.Name}}, {{.Email}}, {{.Attributes.x}}, {{.UnsubscribeURL}}" />
      <${Select} label="Content type" value=${f.content_type} onChange=${set('content_type')} error=${fieldError(shown, '/content_type')}
        options=${[['html', 'HTML'], ['markdown', 'Markdown'], ['blocks', 'Blocks (visual builder)']]} />
      ${markdown || blocks ? html`
      ${markdown ? html`<${Source} label="Markdown" value=${f.markdown} onInput=${set('markdown')} error=${fieldError(shown, '/markdown')} line=${lineOf(shown, '/markdown')} />
      <${MediaPicker} format="markdown" onInsert=${(/** @type {string} */ snip) => set('markdown')(appendLine(f.markdown, snip))} />`
        : html`<${Builder} design=${f.blocks} onChange=${set('blocks')} error=${shown} />`}
      <${Select} label="Layout" value=${f.layout_id} onChange=${set('layout_id')} error=${fieldError(shown, '/layout_id')}
        options=${[['', "The account's default layout"], ...layouts.map((/** @type {any} */ l) => [String(l.id), l.name + (l.default ? ' (default)' : '')])]} />` : html`
      <${Source} label="HTML" value=${f.html} onInput=${set('html')} error=${fieldError(shown, '/html')} line=${lineOf(shown, '/html')} />
      <${MediaPicker} format="html" onInsert=${(/** @type {string} */ snip) => set('html')(appendLine(f.html, snip))} />
      <${Source} label="Text" value=${f.text} onInput=${set('text')} error=${fieldError(shown, '/text')} line=${lineOf(shown, '/text')} />`}
      <${Field} label="Sample data (JSON object)" textarea rows=${4} value=${sample} onInput=${(/** @type {string} */ v) => { setSample(v); setError(null); }}
        hint="What {{.Attributes}} holds in the preview (and in a campaign preview without a subscriber)." error=${parsed.error || fieldError(error, '/sample_data')} />
      <${ErrorBox} error=${error} labels=${{ '/name': 'Name', '/subject': 'Subject', '/html': 'HTML', '/text': 'Text', '/content_type': 'Content type', '/markdown': 'Markdown', '/blocks': 'Blocks', '/layout_id': 'Layout', '/sample_data': 'Sample data' }} />
      <p role="status">${note}</p>
      <button type="submit" class="primary">${saved ? 'Save and preview' : 'Create and preview'}</button>
    </form>
    <section aria-labelledby="rendered" aria-live="polite" data-rendered=${out ? 'yes' : undefined}><h2 id="rendered">Preview with ${who ? who.email + "'s data" : 'the sample data'}</h2>
      <form onSubmit=${previewAs} class="inline" data-reads aria-label="Preview as a subscriber">
        <${Field} label="As subscriber (address; empty: the sample data)" type="email" value=${asEmail} onInput=${setAsEmail} error=${whoError ? String(whoError.message || whoError) : undefined} />
        <button type="submit">Preview as</button>
      </form>
      <${ViewControls} view=${view} onChange=${setView} />
      ${!out && html`<p>${live ? 'The template has an error: see the field marked above.' : parsed.error ? 'The sample data is not a JSON object: see its field above.' : 'Rendering…'}</p>`}
      ${out && html`<${Rendered} out=${out} view=${view} title="Rendered HTML" />`}</section>`;
}

export function Templates() {
  const paged = usePaged('/v1/templates?limit=50');
  const { page, error, reload } = paged;
  // undefined: no editor; null: a new template; an object: that template (a copy to
  // clone has no id: saving creates it).
  const [editing, setEditing] = useState(/** @type {any} */ (undefined));
  const [actionError, setActionError] = useState(/** @type {any} */ (null));
  const [note, setNote] = useState('');
  const remove = async (/** @type {any} */ t) => {
    if (!confirm(`Delete the template ${t.name}? Campaigns already approved keep their copy.`)) return;
    setActionError(null);
    setNote('');
    try {
      await api('DELETE', '/v1/templates/' + t.id);
      if (editing && editing.id === t.id) setEditing(undefined);
      setNote(`The template ${t.name} is deleted.`);
      reload();
    } catch (err) { setActionError(err); }
  };
  const clone = (/** @type {any} */ t) => setEditing({ ...t, id: undefined, name: 'Copy of ' + t.name });
  const heading = editing === null ? 'New template' : editing && !editing.id ? 'New template (a copy)' : editing ? 'Edit ' + editing.name : '';
  return html`<${PageHeader} title="Templates"><button type="button" class=${editing === undefined ? 'primary' : ''} onClick=${() => setEditing(null)}>New template</button></${PageHeader}>
    <${ErrorBox} error=${error} />
    <${ErrorBox} error=${actionError} />
    ${note && html`<p role="status">${note}</p>`}
    ${editing !== undefined && html`<section aria-labelledby="editor"><h2 id="editor">${heading}</h2>
      <${Editor} key=${editing ? editing.id || 'copy-' + editing.name : 'new'} tpl=${editing}
        onSaved=${(/** @type {any} */ t) => { reload(); if (!editing || !editing.id) setEditing(t); }} /></section>`}
    ${page && page.data.length === 0 && html`<${Empty} title="No templates yet."><p>A template serves campaigns and transactional messages alike.</p></${Empty}>`}
    ${page && page.data.length > 0 && html`<div class="table-wrap"><table>
      <caption class="sr-only">Templates</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Subject</th><th scope="col">Updated</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${page.data.map((/** @type {any} */ t) => html`<tr key=${t.id}>
        <td><button type="button" class="link" data-reads onClick=${() => setEditing(t)}>${t.name}</button></td><td><code>${t.subject}</code></td><td>${when(t.updated_at)}</td>
        <td class="row-actions"><button type="button" class="link" onClick=${() => clone(t)} aria-label=${'Clone ' + t.name}>Clone</button>
          <button type="button" class="link danger" onClick=${() => remove(t)} aria-label=${'Delete ' + t.name}>Delete</button></td></tr>`)}</tbody>
    </table></div>`}
    <${Pager} paged=${paged} label="Templates" />`;
}
