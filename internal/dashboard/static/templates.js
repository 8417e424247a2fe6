import { html, useState, useEffect } from './preact-htm.js';
import { api } from './api.js';
import { Field, ErrorBox, Empty, fieldError, useLoad, when } from './ui.js';

/** The line a Go template error names ("template: html:3: …"), to point at it. @param {string|undefined} msg */
function lineOf(msg) {
  const m = msg && msg.match(/:(\d+):/);
  return m ? Number(m[1]) : 0;
}

/** @param {{label:string, value:string, onInput:(v:string)=>void, error?:string}} p */
function Source({ label, value, onInput, error }) {
  const line = lineOf(error);
  return html`<div>
    <${Field} label=${label} textarea rows=${8} value=${value} onInput=${onInput} error=${error} />
    ${line > 0 && html`<pre class="source error-line" aria-label=${'Line ' + line}>${line}: ${value.split('\n')[line - 1] || ''}</pre>`}
  </div>`;
}

/** @param {{tpl:any, onSaved:()=>void}} p */
function Editor({ tpl, onSaved }) {
  const [f, setF] = useState({ name: tpl ? tpl.name : '', subject: tpl ? tpl.subject : '', html: tpl ? tpl.html : '', text: tpl ? tpl.text : '' });
  const [error, setError] = useState(/** @type {any} */ (null));
  const [out, setOut] = useState(/** @type {any} */ (null));
  const [saved, setSaved] = useState(tpl);
  const set = (/** @type {string} */ k) => (/** @type {string} */ v) => setF({ ...f, [k]: v });
  useEffect(() => {
    if (!saved) return;
    api('POST', `/v1/templates/${saved.id}/render`, {}).then(setOut, () => setOut(null));
  }, [saved]);
  const save = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    try {
      const t = saved ? await api('PATCH', '/v1/templates/' + saved.id, f) : await api('POST', '/v1/templates', f);
      setSaved(t);
      onSaved();
    } catch (err) { setError(err); }
  };
  return html`<form onSubmit=${save} class="form">
      <${Field} label="Name" value=${f.name} onInput=${set('name')} required error=${fieldError(error, '/name')} />
      <${Field} label="Subject" value=${f.subject} onInput=${set('subject')} required error=${fieldError(error, '/subject')}
        hint="Go templates: {{.Name}}, {{.Email}}, {{.Attributes.x}}, {{.UnsubscribeURL}}" />
      <${Source} label="HTML" value=${f.html} onInput=${set('html')} error=${fieldError(error, '/html')} />
      <${Source} label="Text" value=${f.text} onInput=${set('text')} error=${fieldError(error, '/text')} />
      <${ErrorBox} error=${error} />
      <button type="submit">${saved ? 'Save and preview' : 'Create and preview'}</button>
    </form>
    ${out && html`<section aria-labelledby="rendered" data-rendered="yes"><h2 id="rendered">Rendered with the sample data</h2>
      <p>Subject: <strong>${out.subject}</strong></p>
      ${out.html && html`<iframe title="Rendered HTML" sandbox="" srcdoc=${out.html}></iframe>`}
      <pre class="source">${out.text}</pre></section>`}`;
}

export function Templates() {
  const [page, error, reload] = useLoad(() => api('GET', '/v1/templates?limit=200'));
  const [editing, setEditing] = useState(/** @type {any} */ (undefined));
  return html`<h1>Templates</h1>
    <p><button type="button" onClick=${() => setEditing(null)}>New template</button></p>
    <${ErrorBox} error=${error} />
    ${editing !== undefined && html`<section aria-labelledby="editor"><h2 id="editor">${editing ? 'Edit ' + editing.name : 'New template'}</h2>
      <${Editor} key=${editing ? editing.id : 'new'} tpl=${editing} onSaved=${reload} /></section>`}
    ${page && page.data.length === 0 && html`<${Empty} title="No templates yet."><p>A template serves campaigns and transactional messages alike.</p></${Empty}>`}
    ${page && page.data.length > 0 && html`<div class="table-wrap"><table>
      <caption class="sr-only">Templates</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Subject</th><th scope="col">Updated</th></tr></thead>
      <tbody>${page.data.map((/** @type {any} */ t) => html`<tr key=${t.id}>
        <td><button type="button" class="link" onClick=${() => setEditing(t)}>${t.name}</button></td><td><code>${t.subject}</code></td><td>${when(t.updated_at)}</td></tr>`)}</tbody>
    </table></div>`}`;
}
