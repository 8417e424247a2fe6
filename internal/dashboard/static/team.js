// The account's people: members and their roles, pending invitations, the
// invite form, and the account's security settings (four eyes, a second factor
// required of everyone). Controls show only to a session that may use them.
import { html, useState } from './preact-htm.js';
import { api } from './api.js';
import { Field, Select, ErrorBox, Empty, fieldError, useLoad, when, useId } from './ui.js';
import { can, person } from './perm.js';

const roles = [
  ['owner', 'Owner: everything, owners included'],
  ['admin', 'Admin: everything but owners'],
  ['editor', 'Editor: audience, templates, drafts'],
  ['approver', 'Approver: approves, pauses, cancels'],
  ['viewer', 'Viewer: reads only'],
];

/** The roles this session may give: only an owner makes owners. */
function grantable() {
  return roles.filter(([r]) => r !== 'owner' || can('owners:manage'));
}

export function Team() {
  const [list, error, reload] = useLoad(() => api('GET', '/v1/members'));
  const [actionError, setActionError] = useState(/** @type {any} */ (null));
  const [said, setSaid] = useState('');
  const manage = can('members:manage');
  const me = person();
  /** @param {() => Promise<any>} fn @param {string} done */
  const act = async (fn, done) => {
    setActionError(null);
    setSaid('');
    try { await fn(); setSaid(done); } catch (err) { setActionError(err); }
    reload();
  };
  const remove = (/** @type {any} */ m) => {
    if (!confirm(`Remove ${m.email} from this account? Their sessions here end at once.`)) return;
    act(() => api('DELETE', '/v1/members/' + m.user_id), `${m.email} is no longer a member.`);
  };
  const revoke = (/** @type {any} */ i) => {
    if (!confirm(`Withdraw the invitation of ${i.email}? Its link stops working.`)) return;
    act(() => api('DELETE', '/v1/invitations/' + i.id), `The invitation of ${i.email} is withdrawn.`);
  };
  const setRole = (/** @type {any} */ m, /** @type {string} */ role) => {
    if (role === m.role) return;
    if (!confirm(`Make ${m.email} ${role}? Their sessions here end; they sign in again with the new role.`)) { reload(); return; }
    act(() => api('PATCH', '/v1/members/' + m.user_id, { role }), `${m.email} is now ${role}.`);
  };
  // An owner's row can be changed only by an owner.
  const mayChange = (/** @type {any} */ m) => manage && (m.role !== 'owner' || can('owners:manage'));
  return html`<h1>Team</h1>
    <p>The people of this account and what each may do: owners and admins manage members, editors prepare, approvers decide what is sent, viewers read.</p>
    ${manage && html`<${Invite} onDone=${(/** @type {string} */ s) => { setSaid(s); reload(); }} />`}
    ${said && html`<p class="notice" role="status">${said}</p>`}
    <${ErrorBox} error=${actionError} />
    <${ErrorBox} error=${error} />
    ${list && html`<section aria-labelledby="members"><h2 id="members">Members</h2>
      <div class="table-wrap"><table class="members">
      <caption class="sr-only">Members</caption>
      <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Second factor</th><th scope="col">Since</th>${manage && html`<th scope="col"><span class="sr-only">Actions</span></th>`}</tr></thead>
      <tbody>${list.members.map((/** @type {any} */ m) => html`<tr key=${m.user_id} data-member=${m.email}>
        <td>${m.email}${me && me.id === m.user_id ? ' (you)' : ''}</td>
        <td data-role=${m.role}>${mayChange(m)
          ? html`<${RoleSelect} email=${m.email} value=${m.role} onChange=${(/** @type {string} */ r) => setRole(m, r)} />`
          : m.role}</td>
        <td>${m.two_factor ? 'on' : 'off'}</td>
        <td>${when(m.created_at)}</td>
        ${manage && html`<td>${mayChange(m) && html`<button type="button" class="link danger" onClick=${() => remove(m)} aria-label=${'Remove ' + m.email}>Remove</button>`}</td>`}
      </tr>`)}</tbody></table></div></section>`}
    ${list && html`<section aria-labelledby="invitations"><h2 id="invitations">Pending invitations</h2>
      ${list.invitations.length === 0 ? html`<p>None.</p>` : html`<div class="table-wrap"><table class="invitations">
        <caption class="sr-only">Pending invitations</caption>
        <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Sent</th><th scope="col">Expires</th>${manage && html`<th scope="col"><span class="sr-only">Actions</span></th>`}</tr></thead>
        <tbody>${list.invitations.map((/** @type {any} */ i) => html`<tr key=${i.id} data-invitation=${i.email}>
          <td>${i.email}</td><td>${i.role}</td><td>${when(i.created_at)}</td><td>${when(i.expires_at)}</td>
          ${manage && html`<td><button type="button" class="link danger" onClick=${() => revoke(i)} aria-label=${'Withdraw the invitation of ' + i.email}>Withdraw</button></td>`}
        </tr>`)}</tbody></table></div>`}</section>`}
    ${can('account:manage') && html`<${Security} />`}`;
}

/** @param {{email:string, value:string, onChange:(r:string)=>void}} p */
function RoleSelect({ email, value, onChange }) {
  const id = useId('role');
  return html`<label for=${id} class="sr-only">Role of ${email}</label>
    <select id=${id} onChange=${(/** @type {any} */ e) => onChange(e.currentTarget.value)}>
      ${grantable().map(([r]) => html`<option value=${r} selected=${r === value}>${r}</option>`)}
    </select>`;
}

/** @param {{onDone:(said:string)=>void}} p */
function Invite({ onDone }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('editor');
  const [error, setError] = useState(/** @type {any} */ (null));
  const [busy, setBusy] = useState(false);
  const submit = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api('POST', '/v1/invitations', { email, role });
      onDone(`An invitation is on its way to ${email}: its link works once, within 7 days.`);
      setEmail('');
    } catch (err) { setError(err); }
    setBusy(false);
  };
  return html`<form onSubmit=${submit} class="inline" aria-label="Invite">
    <${Field} label="Invite by email" type="email" value=${email} onInput=${setEmail} required error=${fieldError(error, '/email')} />
    <${Select} label="Role" value=${role} onChange=${setRole} options=${grantable()} error=${fieldError(error, '/role')} />
    <button type="submit" disabled=${busy}>Send invitation</button>
    <${ErrorBox} error=${error} />
  </form>`;
}

/** The account's security settings: four eyes and a required second factor. */
function Security() {
  const [state, error, reload] = useLoad(async () => {
    const [a, s] = await Promise.all([api('GET', '/v1/account'), api('GET', '/v1/account/security')]);
    return { fourEyes: !!a.four_eyes, require: !!s.require_two_factor };
  });
  const [saveError, setSaveError] = useState(/** @type {any} */ (null));
  const [said, setSaid] = useState('');
  /** @param {string} path @param {any} body @param {string} done */
  const save = async (path, body, done) => {
    setSaveError(null);
    setSaid('');
    try { await api('PATCH', path, body); setSaid(done); } catch (err) { setSaveError(err); }
    reload();
  };
  return html`<section aria-labelledby="security"><h2 id="security">Security</h2>
    <${ErrorBox} error=${error || saveError} />
    ${state && html`<div class="field checkbox"><label>
        <input type="checkbox" checked=${state.fourEyes} onChange=${(/** @type {any} */ e) => save('/v1/account', { four_eyes: e.currentTarget.checked },
          e.currentTarget.checked ? 'Four eyes is on: whoever creates a campaign may not approve it.' : 'Four eyes is off.')} />
        Four eyes: a campaign's creator may not approve it</label></div>
      <div class="field checkbox"><label>
        <input type="checkbox" checked=${state.require} onChange=${(/** @type {any} */ e) => save('/v1/account/security', { require_two_factor: e.currentTarget.checked },
          e.currentTarget.checked ? 'Every member now needs a second factor: those without one are asked to set it up.' : 'A second factor is no longer required.')} />
        Require a second factor of every member</label></div>`}
    ${said && html`<p class="notice" role="status">${said}</p>`}
  </section>`;
}
