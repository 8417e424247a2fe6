// Layouts: the frames Markdown and block content goes in (a frame with
// {{content}}, a header, a footer and brand colours). Saving one recomposes the
// templates and draft campaigns it frames; approved campaigns keep their copy.
import { html, useState } from './preact-htm.js';
import { api } from './api.js';
import { Field, ErrorBox, Empty, fieldError, when, PageHeader, toast, useId } from './ui.js';
import { usePaged, Pager } from './pager.js';

/** The brand colours, in the order the form shows them, with what each one colours. */
const colours = /** @type {Array<[string, string, string]>} */ ([
  ['primary', 'Primary colour', "A button's background where a block design sets none; {{brand.primary}} in the frame."],
  ['background', 'Background colour', 'The colour around the content; {{brand.background}}.'],
  ['text', 'Text colour', 'Headings and text; {{brand.text}}.'],
  ['link', 'Link colour', 'Links; {{brand.link}}.'],
]);

const hex = /^#[0-9a-fA-F]{6}$/;

/**
 * A brand colour: its #rrggbb typed (empty: none), and a colour picker that
 * fills it in.
 * @param {{name:string, label:string, hint:string, value:string, onInput:(v:string)=>void, error?:string}} p
 */
function Colour({ name, label, hint, value, onInput, error }) {
  const id = useId('colour');
  return html`<div class="colour-field" data-colour=${name}>
    <${Field} label=${label + ' (#rrggbb, empty: none)'} value=${value} onInput=${onInput} hint=${hint} error=${error} placeholder="#1a56db" />
    <label for=${id} class="colour-pick">Pick the ${label.toLowerCase()}</label>
    <input id=${id} type="color" value=${hex.test(value) ? value.toLowerCase() : '#000000'} onInput=${(/** @type {any} */ e) => onInput(e.currentTarget.value)} />
  </div>`;
}

/** @param {{lay:any, onSaved:(l:any)=>void}} p */
function Editor({ lay, onSaved }) {
  const brand = (lay && lay.brand) || {};
  const [f, setF] = useState({ name: lay ? lay.name : '', html: lay ? lay.html : '<div style="max-width:600px;margin:0 auto">{{content}}</div>',
    text: lay ? lay.text : '', header: lay ? lay.header : '', footer: lay ? lay.footer : '', default: lay ? !!lay.default : false,
    primary: brand.primary || '', background: brand.background || '', text_colour: brand.text || '', link: brand.link || '' });
  const [saved, setSaved] = useState(lay && lay.id ? lay : null);
  const [error, setError] = useState(/** @type {any} */ (null));
  const set = (/** @type {string} */ k) => (/** @type {any} */ v) => { setF({ ...f, [k]: v }); setError(null); };
  const save = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    const body = { name: f.name, html: f.html, text: f.text, header: f.header, footer: f.footer, default: f.default,
      brand: { primary: f.primary.trim(), background: f.background.trim(), text: f.text_colour.trim(), link: f.link.trim() } };
    try {
      const l = saved ? await api('PATCH', '/v1/layouts/' + saved.id, body) : await api('POST', '/v1/layouts', body);
      setSaved(l);
      toast(`Layout ${l.name} saved.`);
      onSaved(l);
    } catch (err) { setError(err); }
  };
  const key = (/** @type {string} */ c) => (c === 'text' ? 'text_colour' : c);
  return html`<form onSubmit=${save} class="form" aria-label="Layout">
    <${Field} label="Name" value=${f.name} onInput=${set('name')} required error=${fieldError(error, '/name')} />
    <${Field} label="HTML frame" textarea rows=${8} value=${f.html} onInput=${set('html')} error=${fieldError(error, '/html')}
      hint="{{content}} once, where the body goes; {{header}} and {{footer}} place them (else around the body); {{brand.primary}}, … the colours." />
    <${Field} label="Text frame" textarea rows=${4} value=${f.text} onInput=${set('text')} error=${fieldError(error, '/text')}
      hint="{{content}} once, or empty: the text part is the body's alone." />
    <${Field} label="Header (HTML)" textarea rows=${3} value=${f.header} onInput=${set('header')} error=${fieldError(error, '/header')} />
    <${Field} label="Footer (HTML)" textarea rows=${3} value=${f.footer} onInput=${set('footer')} error=${fieldError(error, '/footer')}
      hint=${'Such as your postal address and an unsubscribe link: <a href="{{.UnsubscribeURL}}">Unsubscribe</a>.'} />
    <fieldset class="colours"><legend>Brand colours</legend>
      ${colours.map(([c, label, hint]) => html`<${Colour} key=${c} name=${c} label=${label} hint=${hint} value=${f[key(c)]}
        onInput=${set(key(c))} error=${fieldError(error, '/brand/' + c)} />`)}
    </fieldset>
    <label class="check"><input type="checkbox" checked=${f.default} onChange=${(/** @type {any} */ e) => set('default')(e.currentTarget.checked)} />
      The account's default layout: it frames Markdown and block content that names none</label>
    <${ErrorBox} error=${error} labels=${{ '/name': 'Name', '/html': 'HTML frame', '/text': 'Text frame', '/header': 'Header', '/footer': 'Footer',
      '/brand/primary': 'Primary colour', '/brand/background': 'Background colour', '/brand/text': 'Text colour', '/brand/link': 'Link colour' }} />
    <button type="submit" class="primary">${saved ? 'Save layout' : 'Create layout'}</button>
  </form>`;
}

export function Layouts() {
  const paged = usePaged('/v1/layouts?limit=50');
  const { page, error, reload } = paged;
  // undefined: no editor; null: a new layout; an object: that layout.
  const [editing, setEditing] = useState(/** @type {any} */ (undefined));
  const [actionError, setActionError] = useState(/** @type {any} */ (null));
  const remove = async (/** @type {any} */ l) => {
    if (!confirm(`Delete the layout ${l.name}?`)) return;
    setActionError(null);
    try {
      await api('DELETE', '/v1/layouts/' + l.id);
      if (editing && editing.id === l.id) setEditing(undefined);
      toast(`The layout ${l.name} is deleted.`);
      reload();
    } catch (err) { setActionError(err); }
  };
  return html`<${PageHeader} title="Layouts"><button type="button" class=${editing === undefined ? 'primary' : ''} onClick=${() => setEditing(null)}>New layout</button></${PageHeader}>
    <${ErrorBox} error=${error} />
    <${ErrorBox} error=${actionError} />
    ${editing !== undefined && html`<section aria-labelledby="editor"><h2 id="editor">${editing ? 'Edit ' + editing.name : 'New layout'}</h2>
      <${Editor} key=${editing ? editing.id : 'new'} lay=${editing} onSaved=${(/** @type {any} */ l) => { reload(); if (!editing) setEditing(l); }} /></section>`}
    ${page && page.data.length === 0 && html`<${Empty} title="No layouts yet."><p>A layout frames Markdown and block content: a header, a footer and your brand colours around it.</p></${Empty}>`}
    ${page && page.data.length > 0 && html`<div class="table-wrap"><table>
      <caption class="sr-only">Layouts</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Colours</th><th scope="col">Updated</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${page.data.map((/** @type {any} */ l) => html`<tr key=${l.id}>
        <td><button type="button" class="link" data-reads onClick=${() => setEditing(l)}>${l.name}</button>${l.default ? ' (default)' : ''}</td>
        <td>${colours.filter(([c]) => l.brand && l.brand[c]).map(([c, label]) => html`<span key=${c} class="swatch-item"><span class="swatch" aria-hidden="true"
          style=${{ background: l.brand[c] }}></span><span class="sr-only">${label} ${l.brand[c]}</span></span>`)}${colours.some(([c]) => l.brand && l.brand[c]) ? '' : 'None'}</td>
        <td>${when(l.updated_at)}</td>
        <td class="row-actions"><button type="button" class="link danger" onClick=${() => remove(l)} aria-label=${'Delete ' + l.name}>Delete</button></td></tr>`)}</tbody>
    </table></div>`}
    <${Pager} paged=${paged} label="Layouts" />`;
}
