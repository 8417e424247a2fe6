// Lists and their members: create, rename, delete; a list's page pages through its
// members (subscribed, pending, unsubscribed or any) and adds or removes one.
import { html, useState } from './preact-htm.js';
import { api } from './api.js';
import { Field, Select, ErrorBox, Empty, fieldError, useLoad, when, num, go, useId, PageHeader, toast } from './ui.js';
import { usePaged, Pager } from './pager.js';
import { ExportLinks } from './export.js';

/**
 * The subscriber with exactly this address (the API filters by prefix).
 * @param {string} email
 */
export async function findByEmail(email) {
  const want = email.trim().toLowerCase();
  const page = await api('GET', '/v1/subscribers?limit=20&email=' + encodeURIComponent(want));
  return page.data.find((/** @type {any} */ s) => s.email.toLowerCase() === want) || null;
}

export function Lists() {
  const paged = usePaged('/v1/lists?limit=50');
  const { page, error, reload } = paged;
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [addError, setAddError] = useState(/** @type {any} */ (null));
  const add = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setAddError(null);
    try {
      const l = await api('POST', '/v1/lists', { name, description });
      setName(''); setDescription('');
      go('#/lists/' + l.id);
    } catch (err) { setAddError(err); }
  };
  return html`<${PageHeader} title="Lists" />
    <${ErrorBox} error=${error} />
    ${page && page.data.length === 0 && html`<${Empty} title="No lists yet."><p>Create one below, then add subscribers from its page (or import a CSV into it on the Subscribers page).</p></${Empty}>`}
    ${page && page.data.length > 0 && html`<div class="table-wrap"><table>
      <caption class="sr-only">Lists</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Members</th><th scope="col">Opt-in</th><th scope="col">Public</th><th scope="col">Created</th></tr></thead>
      <tbody>${page.data.map((/** @type {any} */ l) => html`<tr key=${l.id}>
        <td><a href=${'#/lists/' + l.id}>${l.name}</a>${l.description && html`<br /><small>${l.description}</small>`}</td>
        <td>${num(l.member_count)}</td><td>${l.optin}</td><td>${l.public ? 'yes' : 'no'}</td><td>${when(l.created_at)}</td></tr>`)}</tbody>
    </table></div>`}
    <${Pager} paged=${paged} label="Lists" />
    <h2>New list</h2>
    <form onSubmit=${add} class="form" aria-label="New list">
      <${Field} label="List name" value=${name} onInput=${setName} required error=${fieldError(addError, '/name')} />
      <${Field} label="Description" value=${description} onInput=${setDescription} error=${fieldError(addError, '/description')} />
      <${ErrorBox} error=${addError} />
      <button type="submit" class="primary">Create list</button>
    </form>`;
}

/** @param {{list:any, onSaved:()=>void}} p */
function Rename({ list, onSaved }) {
  const [name, setName] = useState(list.name);
  const [description, setDescription] = useState(list.description);
  const [error, setError] = useState(/** @type {any} */ (null));
  const submit = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    try { await api('PATCH', '/v1/lists/' + list.id, { name, description }); toast('List saved.'); onSaved(); } catch (err) { setError(err); }
  };
  return html`<details><summary>Rename or describe</summary>
    <form onSubmit=${submit} class="form" aria-label="Rename the list">
      <${Field} label="List name" value=${name} onInput=${setName} required error=${fieldError(error, '/name')} />
      <${Field} label="Description" value=${description} onInput=${setDescription} error=${fieldError(error, '/description')} />
      <${ErrorBox} error=${error} />
      <button type="submit">Save</button>
    </form></details>`;
}

/**
 * How people join the list by themselves: the public sign-up form, single or
 * double opt-in, and the confirmation email's sender and language.
 * @param {{list:any, onSaved:()=>void}} p
 */
function SignUp({ list, onSaved }) {
  const [optin, setOptin] = useState(list.optin);
  const [isPublic, setPublic] = useState(list.public);
  const [language, setLanguage] = useState(list.language);
  const [fromEmail, setFromEmail] = useState(list.optin_from_email);
  const [fromName, setFromName] = useState(list.optin_from_name);
  const [template, setTemplate] = useState(String(list.optin_template_id || 0));
  const [templates] = useLoad(() => api('GET', '/v1/templates?limit=200'));
  const [error, setError] = useState(/** @type {any} */ (null));
  const submit = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    try {
      await api('PATCH', '/v1/lists/' + list.id, { optin, public: isPublic, language, optin_from_email: fromEmail, optin_from_name: fromName,
        optin_template_id: Number(template) || null });  // "0" in the select is the built-in email: null
      onSaved();
    } catch (err) { setError(err); }
  };
  return html`<details><summary>Sign-up and opt-in</summary>
    <form onSubmit=${submit} class="form" aria-label="Sign-up settings">
      <${Select} label="Opt-in" value=${optin} onChange=${setOptin} error=${fieldError(error, '/optin')}
        options=${[['single', 'single: a sign-up subscribes at once'], ['double', 'double: a confirmation email first']]} />
      <label class="check"><input type="checkbox" checked=${isPublic} onChange=${(/** @type {any} */ e) => setPublic(e.currentTarget.checked)} /> Public: the sign-up form and the preference page offer it</label>
      ${fieldError(error, '/public') && html`<p class="field-error">${fieldError(error, '/public')}</p>`}
      <${Field} label="Confirmation From address" type="email" value=${fromEmail} onInput=${setFromEmail} error=${fieldError(error, '/optin_from_email')}
        hint="Required for a double opt-in or public list; the default sender must allow it." />
      <${Field} label="Confirmation From name" value=${fromName} onInput=${setFromName} error=${fieldError(error, '/optin_from_name')} />
      <${Select} label="Confirmation email" value=${template} onChange=${setTemplate} error=${fieldError(error, '/optin_template_id')}
        options=${[['0', 'The built-in email, in the list\'s language'],
          ...(templates ? templates.data.map((/** @type {any} */ t) => /** @type {[string,string]} */ ([String(t.id), 'Template: ' + t.name])) : []),
          // The list's template may be past the first 200: keep it choosable.
          ...(list.optin_template_id && templates && !templates.data.some((/** @type {any} */ t) => t.id === list.optin_template_id)
            ? [/** @type {[string,string]} */ ([String(list.optin_template_id), 'Template ' + list.optin_template_id])] : [])]} />
      <p class="hint">A template of yours must carry the link: <code>{{.Attributes.confirm_url}}</code> (and may name the lists: <code>{{.Attributes.lists}}</code>).</p>
      <${Field} label="Language" value=${language} onInput=${setLanguage} error=${fieldError(error, '/language')} hint="en, fr or de; others get English." />
      <${ErrorBox} error=${error} />
      <button type="submit">Save sign-up settings</button>
    </form></details>`;
}

/**
 * A public list's sign-up form: where it posts and the HTML to paste into a web
 * site (a plain form: no script, so any site's CSP allows it).
 * @param {{list:any}} p
 */
function SignUpForm({ list }) {
  const [account, error] = useLoad(() => api('GET', '/v1/account'));
  const [copied, setCopied] = useState('');
  const urlId = useId('signup-url');
  const embedId = useId('signup-embed');
  if (error) return html`<${ErrorBox} error=${error} />`;
  if (!account) return null;
  const url = `${location.origin}/p/${account.public_id}/subscribe`;
  const embed = `<form method="post" action="${url}">
  <label>Email <input type="email" name="email" required></label>
  <label>Name <input type="text" name="name"></label>
  <input type="hidden" name="list_ids" value="${list.id}">
  <button type="submit">Subscribe</button>
</form>`;
  const copy = async (/** @type {string} */ what, /** @type {string} */ text) => {
    try { await navigator.clipboard.writeText(text); setCopied(`${what} copied.`); } catch { setCopied(`Select the ${what.toLowerCase()} and copy it.`); }
  };
  return html`<section aria-labelledby="signup-form"><h2 id="signup-form">Sign-up form</h2>
    <p>The list is public: people sign up by posting to this address${list.optin === 'double' ? ' (they get a confirmation email first)' : ''}.</p>
    <div class="field"><label for=${urlId}>Sign-up URL</label>
      <input id=${urlId} readonly value=${url} data-signup-url onFocus=${(/** @type {any} */ e) => e.currentTarget.select()} /></div>
    <div class="field"><label for=${embedId}>HTML to embed</label>
      <textarea id=${embedId} readonly rows=${6} data-signup-embed onFocus=${(/** @type {any} */ e) => e.currentTarget.select()}>${embed}</textarea></div>
    <div class="actions">
      <button type="button" class="secondary" data-reads onClick=${() => copy('URL', url)}>Copy URL</button>
      <button type="button" class="secondary" data-reads onClick=${() => copy('HTML', embed)}>Copy HTML</button>
    </div>
    <p role="status">${copied}</p>
  </section>`;
}

/** A template's name, by id. @param {{id:number}} p */
function TemplateName({ id }) {
  const [t] = useLoad(() => api('GET', '/v1/templates/' + id), [id]);
  return html`<strong data-optin-template=${id}>${t ? t.name : id}</strong>`;
}

/** @param {{id:number}} p */
export function ListPage({ id }) {
  const [list, error, reloadList] = useLoad(() => api('GET', '/v1/lists/' + id), [id]);
  const [membership, setMembership] = useState('subscribed');
  const paged = usePaged(`/v1/subscribers?limit=50&list_id=${id}&membership=${membership}`);
  const { page, error: membersError, reload } = paged;
  const [email, setEmail] = useState('');
  const [addError, setAddError] = useState(/** @type {any} */ (null));
  const [note, setNote] = useState('');
  const [actionError, setActionError] = useState(/** @type {any} */ (null));
  const add = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setAddError(null);
    setNote('');
    try {
      const s = await findByEmail(email);
      if (!s) {
        setAddError({ message: 'Check the address.', fields: { '/email': `No subscriber has the address ${email}: add it on the Subscribers page first.` } });
        return;
      }
      const r = await api('POST', `/v1/lists/${id}/members`, { subscriber_ids: [s.id] });
      setNote(r.changed ? `${s.email} is now a member.` : `${s.email} was already in the list.`);
      setEmail('');
      reload(); reloadList();
    } catch (err) { setAddError(err); }
  };
  const remove = async (/** @type {any} */ s) => {
    setActionError(null);
    setNote('');
    try {
      await api('DELETE', `/v1/lists/${id}/members`, { subscriber_ids: [s.id] });
      setNote(`${s.email} is no longer in the list.`);
      reload(); reloadList();
    } catch (err) { setActionError(err); }
  };
  const removeList = async () => {
    if (!list || !confirm(`Delete the list ${list.name}? Its subscribers stay.`)) return;
    try { await api('DELETE', '/v1/lists/' + id); go('#/lists'); } catch (err) { setActionError(err); }
  };
  if (error) return html`<${PageHeader} title=${`List ${id}`} /><${ErrorBox} error=${error} /><p><a href="#/lists">All lists</a></p>`;
  if (!list) return html`<p class="loading">Loading…</p>`;
  return html`<${PageHeader} title=${list.name} />
    <p><a href="#/lists">All lists</a></p>
    ${list.description && html`<p>${list.description}</p>`}
    <p><strong data-members=${list.member_count}>${num(list.member_count)}</strong> subscribed members; opt-in ${list.optin}${list.public ? ', public sign-up form' : ''}${list.optin_template_id ? html`; the confirmation email is the template <${TemplateName} id=${list.optin_template_id} />` : ''}.</p>
    <${Rename} key=${list.updated_at} list=${list} onSaved=${reloadList} />
    <${SignUp} key=${'s' + list.updated_at} list=${list} onSaved=${reloadList} />
    ${list.public && html`<${SignUpForm} list=${list} />`}
    <h2>Add a member</h2>
    <form onSubmit=${add} class="inline" aria-label="Add a member">
      <${Field} label="Subscriber address" type="email" value=${email} onInput=${setEmail} required
        error=${addError && (addError.fields || {})['/email'] || fieldError(addError, '/subscriber_ids') || fieldError(addError, '/subscriber_ids/0')} />
      <button type="submit" class="primary">Add to list</button>
    </form>
    ${addError && !(addError.fields || {})['/email'] && html`<${ErrorBox} error=${addError} />`}
    ${note && html`<p role="status">${note}</p>`}
    <${ErrorBox} error=${actionError} />
    <h2>Members</h2>
    <form class="inline" onSubmit=${(/** @type {Event} */ e) => e.preventDefault()} aria-label="Which members" data-reads>
      <${Select} label="Membership" value=${membership} onChange=${setMembership}
        options=${[['subscribed', 'subscribed'], ['pending', 'pending confirmation'], ['unsubscribed', 'left the list'], ['any', 'any']]} />
    </form>
    <${ErrorBox} error=${membersError} />
    ${page && page.data.length === 0 && html`<${Empty} title=${membership === 'subscribed' ? 'No members yet.' : 'No members of this kind.'}>
      <p>Add a subscriber by address above, or import a CSV into this list on the <a href="#/subscribers">Subscribers</a> page.</p></${Empty}>`}
    ${page && page.data.length > 0 && html`<div class="table-wrap"><table class="members">
      <caption class="sr-only">Members</caption>
      <thead><tr><th scope="col">Address</th><th scope="col">Name</th><th scope="col">Status</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${page.data.map((/** @type {any} */ s) => html`<tr key=${s.id}>
        <td><a href=${'#/subscribers/' + s.id}>${s.email}</a></td><td>${s.name}</td><td>${s.status}</td>
        <td><button type="button" class="link danger" onClick=${() => remove(s)} aria-label=${'Remove ' + s.email + ' from the list'}>Remove</button></td></tr>`)}</tbody>
    </table></div>`}
    <${Pager} paged=${paged} label="Members" />
    <${ExportLinks} path="/v1/subscribers/export" params=${{ list_id: String(id), membership }} name=${`list-${id}-members`} label="members" permission="audience:read" />
    <h2>Delete</h2>
    <p><button type="button" class="danger" onClick=${removeList}>Delete list</button></p>`;
}
