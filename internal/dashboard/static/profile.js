// A signed-in person's own page: their password, second factor (TOTP and
// recovery codes) and sessions; and the switcher between their accounts that
// the shell's header shows when they have more than one.
import { html, useState } from './preact-htm.js';
import { api, Problem } from './api.js';
import { Field, ErrorBox, Empty, fieldError, useLoad, when, useId } from './ui.js';
import { person } from './perm.js';

/** @param {{enrol?:boolean}} p enrol: the account requires a second factor this person lacks. */
export function Profile({ enrol }) {
  const me = person();
  if (!me) {
    return html`<h1>Profile</h1><${Empty} title="This session is an API key's, not a person's.">
      <p>People sign in with their email address; a key's session has no password, second factor or sessions of its own.</p></${Empty}>`;
  }
  return html`<h1>Profile</h1>
    <p>Signed in as <strong>${me.email}</strong>, ${me.role} of this account.</p>
    ${enrol && html`<p class="notice" role="status">This account requires a second factor of every member: set yours up below to go on.</p>`}
    <${TwoFactor} enrol=${enrol} />
    ${!enrol && html`<${Password} email=${me.email} /><${Sessions} />`}`;
}

/** @param {{enrol?:boolean}} p */
// Every control here is the person's own, not the account's: a viewer uses them
// too, so they carry data-reads (the read-only shell hides the others).
function TwoFactor({ enrol }) {
  const me = person();
  // Whether it is on: the member list says (while enrolment is required, nothing
  // but the second factor's routes answers, and it is off).
  const [on, loadError, reload] = useLoad(async () => {
    if (enrol) return false;
    const l = await api('GET', '/v1/members');
    return !!(l.members.find((/** @type {any} */ m) => m.user_id === me.id) || {}).two_factor;
  });
  const [setup, setSetup] = useState(/** @type {any} */ (null));
  const [codes, setCodes] = useState(/** @type {string[]|null} */ (null));
  const [code, setCode] = useState('');
  const [error, setError] = useState(/** @type {any} */ (null));
  const [busy, setBusy] = useState(false);
  const [said, setSaid] = useState('');
  const secretId = useId('secret');
  const uriId = useId('uri');
  /** @param {() => Promise<void>} fn */
  const run = async (fn) => {
    setBusy(true);
    setError(null);
    setSaid('');
    try { await fn(); } catch (err) { setError(err); } finally { setBusy(false); setCode(''); }
  };
  const start = () => run(async () => { setSetup(await api('POST', '/v1/me/two-factor')); });
  const confirmCode = (/** @type {Event} */ e) => {
    e.preventDefault();
    run(async () => {
      const r = await api('POST', '/v1/me/two-factor/confirm', { code: code.trim() });
      setSetup(null);
      setCodes(r.recovery_codes);
      reload();
    });
  };
  const remove = (/** @type {Event} */ e) => {
    e.preventDefault();
    run(async () => {
      await api('POST', '/v1/me/two-factor/remove', { code: code.trim() });
      setSaid('The second factor is off: your password (or an email link) alone signs you in.');
      reload();
    });
  };
  const done = () => {
    setCodes(null);
    // The account's requirement is met: the rest of the dashboard answers now.
    if (enrol) location.reload();
  };
  return html`<section aria-labelledby="two-factor"><h2 id="two-factor">Second factor</h2>
    <${ErrorBox} error=${loadError} />
    ${codes && html`<div class="notice" role="status" data-recovery-codes>
      <p><strong>The second factor is on.</strong> These recovery codes each sign you in once if you lose your authenticator app. Keep them somewhere safe: they are not shown again.</p>
      <ul class="plain codes">${codes.map((c) => html`<li key=${c}><code>${c}</code></li>`)}</ul>
      <button type="button" data-reads onClick=${done}>I have saved them</button>
    </div>`}
    ${!codes && on === false && !setup && html`<p>Off. With a second factor, signing in also asks for a code from an authenticator app.</p>
      <button type="button" data-reads disabled=${busy} onClick=${start}>Set up a second factor</button>`}
    ${!codes && setup && html`<form onSubmit=${confirmCode} data-reads aria-label="Confirm the second factor">
      <p>Add this to your authenticator app: paste the setup address, or type the secret. (The dashboard shows no QR code: it has no QR generator of its own, and none is sent to another site.)</p>
      <div class="field"><label for=${uriId}>Setup address</label>
        <input id=${uriId} readonly value=${setup.otpauth_url} onFocus=${(/** @type {any} */ e) => e.currentTarget.select()} /></div>
      <div class="field"><label for=${secretId}>Secret</label>
        <input id=${secretId} readonly value=${setup.secret} data-secret onFocus=${(/** @type {any} */ e) => e.currentTarget.select()} /></div>
      <${Field} label="Code from the app" autocomplete="one-time-code" value=${code} onInput=${setCode} required error=${fieldError(error, '/code')} />
      <button type="submit" disabled=${busy}>Turn on</button>
    </form>`}
    ${!codes && on === true && html`<p>On: signing in asks for a code from your authenticator app.</p>
      <form onSubmit=${remove} data-reads class="inline" aria-label="Turn off the second factor">
        <${Field} label="Code or recovery code, to turn it off" autocomplete="one-time-code" value=${code} onInput=${setCode} required error=${fieldError(error, '/code')} />
        <button type="submit" class="danger" disabled=${busy}>Turn off</button>
      </form>`}
    <${ErrorBox} error=${error} />
    ${said && html`<p class="notice" role="status">${said}</p>`}
  </section>`;
}

/** @param {{email:string}} p */
function Password({ email }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [said, setSaid] = useState('');
  const [error, setError] = useState(/** @type {any} */ (null));
  const [busy, setBusy] = useState(false);
  const change = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setSaid('');
    try {
      await api('POST', '/v1/me/password', { current_password: current, password: next });
      setSaid('Your password is changed. Your other sessions have ended; this one goes on.');
    } catch (err) {
      setError(err instanceof Problem && err.status === 401
        ? new Error('The current password is wrong. If you have none (you sign in by email link), mail yourself a password link below.') : err);
    } finally { setBusy(false); setCurrent(''); setNext(''); }
  };
  const mail = async () => {
    setError(null);
    try {
      await api('POST', '/v1/password-resets', { email });
      setSaid(`A link to choose a new password is on its way to ${email}. Setting it ends every session you have.`);
    } catch (err) { setError(err); }
  };
  return html`<section aria-labelledby="password"><h2 id="password">Password</h2>
    <form onSubmit=${change} data-reads aria-label="Change password">
      <${Field} label="Current password" type="password" autocomplete="current-password" value=${current} onInput=${setCurrent} required error=${fieldError(error, '/current_password')} />
      <${Field} label="New password" type="password" autocomplete="new-password" value=${next} onInput=${setNext} required hint="10 characters or more. Your other sessions end." error=${fieldError(error, '/password')} />
      <button type="submit" disabled=${busy}>Change password</button>
    </form>
    <p>No password yet, or forgotten it? <button type="button" class="link" data-reads onClick=${mail}>Mail me a password link</button></p>
    <${ErrorBox} error=${error} />
    ${said && html`<p class="notice" role="status">${said}</p>`}
  </section>`;
}

function Sessions() {
  const [list, error, reload] = useLoad(() => api('GET', '/v1/me/sessions'));
  const [endError, setEndError] = useState(/** @type {any} */ (null));
  const end = async (/** @type {any} */ s) => {
    if (!confirm(s.current ? 'End this session? You are signed out here.' : `End the session of ${s.account_name} started ${new Date(s.created_at).toLocaleString()}?`)) return;
    setEndError(null);
    try { await api('DELETE', '/v1/me/sessions/' + s.id); } catch (err) { setEndError(err); }
    if (s.current) location.reload(); else reload();
  };
  return html`<section aria-labelledby="sessions"><h2 id="sessions">Sessions</h2>
    <p>Where you are signed in, in every account of yours.</p>
    <${ErrorBox} error=${error || endError} />
    ${list && html`<div class="table-wrap"><table class="sessions">
      <caption class="sr-only">Your sessions</caption>
      <thead><tr><th scope="col">Account</th><th scope="col">Started</th><th scope="col">Ends</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${list.data.map((/** @type {any} */ s) => html`<tr key=${s.id} data-session=${s.id}>
        <td>${s.account_name}${s.current ? ' (this one)' : ''}</td><td>${when(s.created_at)}</td><td>${when(s.expires_at)}</td>
        <td><button type="button" class="link danger" data-reads onClick=${() => end(s)} aria-label=${'End the session of ' + s.account_name + ' started ' + s.created_at}>End</button></td>
      </tr>`)}</tbody></table></div>`}
  </section>`;
}

/** The header's account switcher: shown to a person of more than one account. @param {{accountId:number}} p */
export function AccountSwitcher({ accountId }) {
  const me = person();
  const [list] = useLoad(() => (me && !me.needs_two_factor ? api('GET', '/v1/me/accounts') : Promise.resolve({ data: [] })));
  const [error, setError] = useState(/** @type {any} */ (null));
  const id = useId('account');
  if (!list || list.data.length < 2) return null;
  const change = async (/** @type {any} */ e) => {
    setError(null);
    try {
      await api('POST', '/v1/me/switch', { account_id: Number(e.currentTarget.value) });
      // A new session (new cookie, new CSRF token): start the dashboard afresh in it.
      location.hash = '#/overview';
      location.reload();
    } catch (err) { setError(err); }
  };
  return html`<span class="switcher">
    <label for=${id} class="sr-only">Account</label>
    <select id=${id} data-reads onChange=${change}>
      ${list.data.map((/** @type {any} */ a) => html`<option value=${a.id} selected=${a.id === accountId}>${a.name} (${a.role})</option>`)}
    </select>
    ${error && html`<span class="field-error" role="alert">${error.message}</span>`}
  </span>`;
}
