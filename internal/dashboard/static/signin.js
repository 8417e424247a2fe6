// Signing in: a person's password (then their second factor when they have one),
// an email link, a forgotten password, single sign-on, and an API key (kept for
// the accounts that have no people yet). The pages a mailed link opens are here
// too: an invitation to accept, a password to reset, an email sign-in link.
import { html, useState, useEffect } from './preact-htm.js';
import { api, Problem } from './api.js';
import { Field, ErrorBox, fieldError } from './ui.js';

/**
 * A sign-in answer: a session (201) or the challenge of a second factor (200).
 * @param {any} res @param {(s:any)=>void} onSignedIn @param {(c:string)=>void} onChallenge
 */
function settle(res, onSignedIn, onChallenge) {
  if (res && res.challenge) onChallenge(res.challenge);
  else onSignedIn(res);
}

/** @param {any} err @param {string} words */
function refused(err, words) {
  return err instanceof Problem && err.status === 401 ? new Error(words) : err;
}

/**
 * @param {{onSignedIn:(s:any)=>void, note?:string, link?:{page:string,arg:string}|null}} p
 * link is the mailed link the page was opened with (its token already out of the address bar).
 */
export function SignIn({ onSignedIn, note, link }) {
  // password | second-factor | email-link | forgot | key | invitation | reset
  const first = link && link.page === 'invitation' ? 'invitation' : link && link.page === 'reset-password' ? 'reset' : 'password';
  const [mode, setMode] = useState(first);
  const [challenge, setChallenge] = useState('');
  const [said, setSaid] = useState(note || '');
  const [error, setError] = useState(/** @type {any} */ (null));
  const [busy, setBusy] = useState(link && link.page === 'sign-in');
  const toChallenge = (/** @type {string} */ c) => { setChallenge(c); setMode('second-factor'); setError(null); };
  useEffect(() => {
    if (!link || link.page !== 'sign-in') return;
    api('POST', '/v1/session/email-link', { token: link.arg }).then((res) => settle(res, onSignedIn, toChallenge), () => {
      setSaid('That sign-in link has been used or has expired: ask for another below.');
      setMode('email-link');
    }).finally(() => setBusy(false));
  }, []);
  /** @param {() => Promise<void>} fn */
  const run = async (fn) => {
    setBusy(true);
    setError(null);
    try { await fn(); } catch (err) { setError(err); } finally { setBusy(false); }
  };
  const go = (/** @type {string} */ m) => { setMode(m); setError(null); setSaid(''); };
  const props = { run, busy, error, go, onSignedIn, toChallenge, setSaid };
  let body;
  switch (mode) {
    case 'second-factor': body = html`<${SecondFactor} ...${props} challenge=${challenge} />`; break;
    case 'email-link': body = html`<${MailMe} ...${props} what="link" />`; break;
    case 'forgot': body = html`<${MailMe} ...${props} what="reset" />`; break;
    case 'key': body = html`<${KeySignIn} ...${props} />`; break;
    case 'invitation': body = html`<${Accept} ...${props} token=${link ? link.arg : ''} />`; break;
    case 'reset': body = html`<${Reset} ...${props} token=${link ? link.arg : ''} />`; break;
    default: body = html`<${Password} ...${props} />`;
  }
  return html`<main class="signin" id="main">
    <h1>sendonce</h1>
    ${said && html`<p class="notice" role="status">${said}</p>`}
    ${body}
    ${mode !== 'password' && html`<p><button type="button" class="link" data-reads onClick=${() => go('password')}>Sign in with a password</button></p>`}
    ${mode === 'password' && html`<ul class="plain signin-ways">
      <li><button type="button" class="link" data-reads onClick=${() => go('email-link')}>Email me a sign-in link</button></li>
      <li><button type="button" class="link" data-reads onClick=${() => go('forgot')}>Forgot your password?</button></li>
      <li><button type="button" class="link" data-reads onClick=${() => go('key')}>Sign in with an API key</button></li>
    </ul>`}
  </main>`;
}

/** @typedef {{run:(fn:()=>Promise<void>)=>void, busy:boolean, error:any, go:(m:string)=>void, onSignedIn:(s:any)=>void, toChallenge:(c:string)=>void, setSaid:(s:string)=>void}} Props */

/** @param {Props} p */
function Password({ run, busy, error, onSignedIn, toChallenge }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [ssoError, setSSOError] = useState('');
  const submit = (/** @type {Event} */ e) => {
    e.preventDefault();
    run(async () => {
      try {
        settle(await api('POST', '/v1/session/password', { email, password }), onSignedIn, toChallenge);
      } catch (err) {
        throw refused(err, 'That email address and password do not match a person of any account here. Check them, or ask for a sign-in link.');
      } finally { setPassword(''); }
    });
  };
  // Single sign-on is the account's identity provider's: the address typed says
  // which account's provider (the server looks it up by the address's domain).
  const sso = () => {
    if (!email.includes('@')) { setSSOError('Type your email address first: it says which single sign-on to use.'); return; }
    location.href = '/sso/start?email=' + encodeURIComponent(email);
  };
  return html`<form onSubmit=${submit} aria-label="Sign in">
    <${Field} label="Email address" type="email" autocomplete="username" value=${email} onInput=${(/** @type {string} */ v) => { setEmail(v); setSSOError(''); }} required
      error=${ssoError || fieldError(error, '/email')} />
    <${Field} label="Password" type="password" autocomplete="current-password" value=${password} onInput=${setPassword} required error=${fieldError(error, '/password')} />
    <${ErrorBox} error=${error} />
    <div class="actions">
      <button type="submit" disabled=${busy}>Sign in</button>
      <button type="button" class="secondary" data-reads onClick=${sso}>Sign in with single sign-on</button>
    </div>
  </form>`;
}

/** @param {Props & {challenge:string}} p */
function SecondFactor({ run, busy, error, onSignedIn, toChallenge, challenge }) {
  const [code, setCode] = useState('');
  const submit = (/** @type {Event} */ e) => {
    e.preventDefault();
    run(async () => {
      try {
        settle(await api('POST', '/v1/session/second-factor', { challenge, code: code.trim() }), onSignedIn, toChallenge);
      } catch (err) {
        throw refused(err, 'That code is not right, or was used already. Type the code your app shows now, or a recovery code. After five minutes, sign in again.');
      } finally { setCode(''); }
    });
  };
  return html`<form onSubmit=${submit} aria-label="Second factor">
    <h2>Second factor</h2>
    <p>Type the six-digit code your authenticator app shows for sendonce, or one of your recovery codes.</p>
    <${Field} label="Code" autocomplete="one-time-code" value=${code} onInput=${setCode} required error=${fieldError(error, '/code')} />
    <${ErrorBox} error=${error} />
    <button type="submit" disabled=${busy}>Continue</button>
  </form>`;
}

/** "Email me a link" and "forgot password": both answer the same whoever asks. @param {Props & {what:string}} p */
function MailMe({ run, busy, error, setSaid, what }) {
  const [email, setEmail] = useState('');
  const submit = (/** @type {Event} */ e) => {
    e.preventDefault();
    run(async () => {
      await api('POST', what === 'link' ? '/v1/sign-in-links' : '/v1/password-resets', { email });
      setSaid(what === 'link'
        ? `If ${email} is a person's address here, a sign-in link is on its way to it. It works once, within 15 minutes.`
        : `If ${email} is a person's address here, a link to choose a new password is on its way to it. It works once, within 30 minutes.`);
    });
  };
  return html`<form onSubmit=${submit} aria-label=${what === 'link' ? 'Email me a sign-in link' : 'Reset my password'}>
    <h2>${what === 'link' ? 'Email me a sign-in link' : 'Forgot your password?'}</h2>
    <${Field} label="Email address" type="email" autocomplete="username" value=${email} onInput=${setEmail} required error=${fieldError(error, '/email')} />
    <${ErrorBox} error=${error} />
    <button type="submit" disabled=${busy}>${what === 'link' ? 'Send me a link' : 'Send me a reset link'}</button>
  </form>`;
}

/** @param {Props} p */
function KeySignIn({ run, busy, error, onSignedIn }) {
  const [key, setKey] = useState('');
  const submit = (/** @type {Event} */ e) => {
    e.preventDefault();
    run(async () => {
      try {
        onSignedIn(await api('POST', '/v1/session', { api_key: key }));
      } catch (err) {
        // Refused at sign-in, a 401 is about the key typed, not a session that ended.
        throw refused(err, 'That API key is not valid: it is wrong, revoked, or of another account or deployment. Check it and try again.');
      } finally { setKey(''); } // the key leaves the page as soon as it has been used
    });
  };
  return html`<form onSubmit=${submit} aria-label="Sign in with an API key">
    <h2>Sign in with an API key</h2>
    <p>Or open the login link that <code>make run</code> or <code>sendonce account login NAME</code> printed.</p>
    <${Field} label="API key" type="password" autocomplete="off" value=${key} onInput=${setKey} required
      hint="The key is exchanged for a session; it is not kept in this browser." error=${fieldError(error, '/api_key')} />
    <${ErrorBox} error=${error} />
    <button type="submit" disabled=${busy}>Sign in</button>
  </form>`;
}

/** The invitation link's page: choose a password (or none, to sign in by email link). @param {Props & {token:string}} p */
function Accept({ run, busy, error, onSignedIn, toChallenge, token }) {
  const [password, setPassword] = useState('');
  const accept = (/** @type {boolean} */ withPassword) => run(async () => {
    try {
      settle(await api('POST', '/v1/invitations/accept', withPassword ? { token, password } : { token }), onSignedIn, toChallenge);
    } catch (err) {
      throw refused(err, 'This invitation has been used, withdrawn or has expired (it works once, within 7 days). Ask whoever invited you for another.');
    }
  });
  const submit = (/** @type {Event} */ e) => { e.preventDefault(); accept(true); };
  return html`<form onSubmit=${submit} aria-label="Accept the invitation">
    <h2>Accept the invitation</h2>
    <p>Choose a password to sign in with from now on.</p>
    <${Field} label="New password" type="password" autocomplete="new-password" value=${password} onInput=${setPassword} required
      hint="10 characters or more." error=${fieldError(error, '/password')} />
    <${ErrorBox} error=${error} />
    <div class="actions">
      <button type="submit" disabled=${busy}>Accept and set password</button>
      <button type="button" class="secondary" data-reads disabled=${busy} onClick=${() => accept(false)}>Accept without a password</button>
    </div>
    <p><small>Without a password you sign in by a link mailed to you each time.</small></p>
  </form>`;
}

/** The password reset link's page. @param {Props & {token:string}} p */
function Reset({ run, busy, error, go, setSaid, token }) {
  const [password, setPassword] = useState('');
  const submit = (/** @type {Event} */ e) => {
    e.preventDefault();
    run(async () => {
      try {
        await api('POST', '/v1/password-resets/complete', { token, password });
      } catch (err) {
        throw refused(err, 'This reset link has been used or has expired (it works once, within 30 minutes). Ask for another.');
      } finally { setPassword(''); }
      go('password');
      setSaid('Your password is changed, and every session you had has ended. Sign in with the new password.');
    });
  };
  return html`<form onSubmit=${submit} aria-label="Choose a new password">
    <h2>Choose a new password</h2>
    <${Field} label="New password" type="password" autocomplete="new-password" value=${password} onInput=${setPassword} required
      hint="10 characters or more. Every session you have ends." error=${fieldError(error, '/password')} />
    <${ErrorBox} error=${error} />
    <button type="submit" disabled=${busy}>Set password</button>
  </form>`;
}
