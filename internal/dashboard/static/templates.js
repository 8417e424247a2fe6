import { html, useState, useEffect } from './preact-htm.js';
import { api, Problem } from './api.js';
import { Field, ErrorBox, Empty, fieldError, useLoad, when } from './ui.js';

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

/** @param {{tpl:any, onSaved:()=>void}} p */
function Editor({ tpl, onSaved }) {
  const [f, setF] = useState({ name: tpl ? tpl.name : '', subject: tpl ? tpl.subject : '', html: tpl ? tpl.html : '', text: tpl ? tpl.text : '' });
  const [error, setError] = useState(/** @type {any} */ (null));
  const [live, setLive] = useState(/** @type {any} */ (null));
  const [out, setOut] = useState(/** @type {any} */ (null));
  const [saved, setSaved] = useState(tpl);
  const [note, setNote] = useState('');
  const set = (/** @type {string} */ k) => (/** @type {string} */ v) => { setF({ ...f, [k]: v }); setError(null); };
  // The live preview: what the editor holds, rendered by the API (nothing saved) a
  // moment after the typing stops; its errors show at their field and line.
  useEffect(() => {
    let current = true;
    const t = setTimeout(() => {
      /** @type {any} */
      const body = { subject: f.subject, html: f.html, text: f.text };
      if (tpl && tpl.sample_data) body.sample_data = tpl.sample_data;
      api('POST', '/v1/templates/preview', body).then((r) => { if (current) { setOut(r); setLive(null); } },
        (err) => { if (current) { setLive(err); setOut(null); } });
    }, 300);
    return () => { current = false; clearTimeout(t); };
  }, [f.subject, f.html, f.text]);
  const save = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    setNote('');
    try {
      const t = saved ? await api('PATCH', '/v1/templates/' + saved.id, f) : await api('POST', '/v1/templates', f);
      setSaved(t);
      setNote('Saved.');
      onSaved();
    } catch (err) { setError(err); }
  };
  const shown = error || live; // a save's refusal, else the live preview's
  return html`<form onSubmit=${save} class="form">
      <${Field} label="Name" value=${f.name} onInput=${set('name')} required error=${fieldError(error, '/name')} />
      <${Field} label="Subject" value=${f.subject} onInput=${set('subject')} required error=${fieldError(shown, '/subject')}
        hint="Go templates: {{.Name}}, {{.Email}}, {{.Attributes.x}}, {{.UnsubscribeURL}}" />
      <${Source} label="HTML" value=${f.html} onInput=${set('html')} error=${fieldError(shown, '/html')} line=${lineOf(shown, '/html')} />
      <${Source} label="Text" value=${f.text} onInput=${set('text')} error=${fieldError(shown, '/text')} line=${lineOf(shown, '/text')} />
      <${ErrorBox} error=${error} />
      <p role="status">${note}</p>
      <button type="submit">${saved ? 'Save and preview' : 'Create and preview'}</button>
    </form>
    <section aria-labelledby="rendered" aria-live="polite" data-rendered=${out ? 'yes' : undefined}><h2 id="rendered">Preview with the sample data</h2>
      ${!out && html`<p>${live ? 'The template has an error: see the field marked above.' : 'Rendering…'}</p>`}
      ${out && html`<p>Subject: <strong>${out.subject}</strong></p>
      ${out.html && html`<iframe title="Rendered HTML" sandbox="" srcdoc=${out.html}></iframe>`}
      <pre class="source">${out.text}</pre>`}</section>`;
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
