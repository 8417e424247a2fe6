// The dashboard's shell: sign-in, navigation by the address's fragment, and the
// pages. Every page is a client of the public /v1 API.
import { html, render, useState, useEffect, useRef } from './preact-htm.js';
import { api, setCSRF, closeStream } from './api.js';
import { Field, ErrorBox, fieldError, NotFound, timeZone, Toasts } from './ui.js';
import { Problem } from './api.js';
import { Overview } from './overview.js';
import { Campaigns, CampaignNew, CampaignPage } from './campaigns.js';
import { Subscribers } from './subscribers.js';
import { Segments, SegmentPage } from './segments.js';
import { Suppressions } from './suppressions.js';
import { Inbox } from './inbox.js';
import { Keys } from './keys.js';
import { Templates } from './templates.js';
import { Messages, MessagePage } from './messages.js';
import { Senders, SenderPage } from './senders.js';
import { EventEndpoints, EndpointPage } from './endpoints.js';
import { Lists, ListPage } from './lists.js';
import { SubscriberPage } from './subscriber.js';
import { Sequences, SequenceNew, SequencePage } from './sequences.js';

const pages = [
  ['overview', 'Overview'],
  ['campaigns', 'Campaigns'],
  ['sequences', 'Sequences'],
  ['subscribers', 'Subscribers'],
  ['lists', 'Lists'],
  ['templates', 'Templates'],
  ['segments', 'Segments'],
  ['suppressions', 'Suppressions'],
  ['messages', 'Messages'],
  ['senders', 'Senders'],
  ['endpoints', 'Event endpoints'],
  ['inbox', 'Dev inbox'],
  ['keys', 'API keys'],
];

// The sidebar's groups, in order; a page not named here is under Settings.
const groups = ['Insights', 'Audience', 'Sending', 'Settings'];
/** @type {Record<string, string>} */
const groupOf = {
  overview: 'Insights', messages: 'Insights',
  subscribers: 'Audience', lists: 'Audience', segments: 'Audience', suppressions: 'Audience',
  campaigns: 'Sending', sequences: 'Sending', templates: 'Sending', senders: 'Sending', inbox: 'Sending',
};

/**
 * The grouped navigation. On a phone it is closed until the menu button opens it:
 * opening moves the focus to its first link, Escape closes it and gives the focus
 * back to the button, and following a link closes it.
 * @param {{here:string, open:boolean, setOpen:(o:boolean)=>void, button:any}} p
 */
function Sidebar({ here, open, setOpen, button }) {
  const ref = useRef(/** @type {HTMLElement|null} */ (null));
  useEffect(() => {
    if (!open) return;
    ref.current?.querySelector('a')?.focus();
    const onKey = (/** @type {KeyboardEvent} */ e) => {
      if (e.key !== 'Escape') return;
      setOpen(false);
      button.current?.focus();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [open]);
  return html`<nav id="sidebar" class=${'sidebar' + (open ? ' open' : '')} aria-label="Main" ref=${ref}>
    ${groups.map((g) => {
      const items = pages.filter(([p]) => (groupOf[p] || 'Settings') === g);
      const id = 'nav-' + g.toLowerCase();
      return items.length > 0 && html`<h2 id=${id}>${g}</h2>
        <ul aria-labelledby=${id}>${items.map(([p, label]) => html`<li key=${p}><a href=${'#/' + p} aria-current=${here === p ? 'page' : undefined}>${label}</a></li>`)}</ul>`;
    })}
  </nav>`;
}

function route() {
  const parts = location.hash.replace(/^#\/?/, '').split('/');
  return { page: parts[0] || 'overview', arg: parts[1] || '' };
}

/** @param {{onSignedIn:(s:any)=>void, note?:string}} p */
function SignIn({ onSignedIn, note }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState(/** @type {any} */ (null));
  const [busy, setBusy] = useState(false);
  const submit = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await api('POST', '/v1/session', { api_key: key }));
    } catch (err) {
      // Refused at sign-in, a 401 is about the key typed, not a session that ended.
      setError(err instanceof Problem && err.status === 401
        ? new Error('That API key is not valid: it is wrong, revoked, or of another account or deployment. Check it and try again.') : err);
    } finally {
      setBusy(false);
      setKey(''); // the key leaves the page as soon as it has been used
    }
  };
  return html`<main class="signin" id="main">
    <h1>sendonce</h1>
    <p>Open the login link that <code>make run</code> or <code>sendonce account login NAME</code> printed, or sign in with an API key.</p>
    ${note && html`<p class="notice" role="status">${note}</p>`}
    <form onSubmit=${submit}>
      <${Field} label="API key" type="password" autocomplete="off" value=${key} onInput=${setKey} required
        hint="The key is exchanged for a session; it is not kept in this browser." error=${fieldError(error, '/api_key')} />
      <${ErrorBox} error=${error} />
      <button type="submit" class="primary" disabled=${busy}>Sign in</button>
    </form>
  </main>`;
}

function App() {
  const [session, setSession] = useState(/** @type {any} */ (undefined));
  const [note, setNote] = useState('');
  const [r, setRoute] = useState(route());
  const [menu, setMenu] = useState(false);
  const menuButton = useRef(/** @type {HTMLButtonElement|null} */ (null));
  useEffect(() => {
    // A login link opened in a tab that is already signed in: start over, so the
    // link is exchanged (and removed from the address bar) like on a first load.
    const onHash = () => {
      setMenu(false);
      if (route().page === 'login') location.reload(); else setRoute(route());
    };
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  useEffect(() => {
    const here = route();
    if (here.page === 'login' && here.arg) {
      // The login token is in the fragment, which never reached the server's logs;
      // take it out of the address bar and the history before anything else.
      history.replaceState(null, '', location.pathname + '#/overview');
      setRoute(route());
      api('POST', '/v1/session', { login_token: here.arg }).then(signedIn, () => {
        setNote('That login link has been used or has expired. Ask for another (sendonce account login NAME), or sign in with a key.');
        setSession(null);
      });
      return;
    }
    api('GET', '/v1/session').then(signedIn, () => setSession(null));
  }, []);
  /** @param {any} s */
  function signedIn(s) {
    setCSRF(s.csrf_token);
    setSession(s);
  }
  async function signOut() {
    closeStream();
    try { await api('DELETE', '/v1/session'); } catch { /* the session is gone either way */ }
    setCSRF(null);
    setSession(null);
    setNote('You are signed out.');
    location.hash = '#/overview';
  }
  if (session === undefined) return html`<p class="loading">Loading…</p>`;
  if (session === null) return html`<${SignIn} onSignedIn=${signedIn} note=${note} />`;
  let body;
  // A detail page is keyed by its id: opened straight from another of its kind, it
  // starts afresh instead of keeping the previous one's typed values and errors. An
  // id that is not a number is no page at all (never asked of the API as NaN).
  const id = /^[1-9]\d{0,17}$/.test(r.arg) ? Number(r.arg) : null;
  /** @param {any} list @param {any} detail @param {string} what */
  const page = (list, detail, what) => (!r.arg ? html`<${list} />` : id !== null ? html`<${detail} key=${r.arg} id=${id} />` : html`<${NotFound} what=${what} />`);
  switch (r.page) {
    case 'campaigns': body = r.arg === 'new' ? html`<${CampaignNew} />` : page(Campaigns, CampaignPage, 'campaign'); break;
    case 'sequences': body = r.arg === 'new' ? html`<${SequenceNew} />` : page(Sequences, SequencePage, 'sequence'); break;
    case 'subscribers': body = page(Subscribers, SubscriberPage, 'subscriber'); break;
    case 'lists': body = page(Lists, ListPage, 'list'); break;
    case 'messages': body = page(Messages, MessagePage, 'message'); break;
    case 'senders': body = page(Senders, SenderPage, 'sender'); break;
    case 'endpoints': body = page(EventEndpoints, EndpointPage, 'event endpoint'); break;
    case 'segments': body = page(Segments, SegmentPage, 'segment'); break;
    case 'templates': body = r.arg ? html`<${NotFound} />` : html`<${Templates} />`; break;
    case 'suppressions': body = r.arg ? html`<${NotFound} />` : html`<${Suppressions} />`; break;
    case 'inbox': body = r.arg ? html`<${NotFound} />` : html`<${Inbox} />`; break;
    case 'keys': body = r.arg ? html`<${NotFound} />` : html`<${Keys} />`; break;
    case 'overview': body = html`<${Overview} />`; break;
    default: body = html`<${NotFound} />`;
  }
  // A read-only session (a read-only key, a viewer: no permission but reads) sees no
  // control that would change something: the API would refuse it, so offering it is
  // a trap (style.css hides them under data-read-only).
  const readOnly = !(session.permissions || []).some((/** @type {string} */ p) => !p.endsWith(':read'));
  return html`<div class="shell" data-read-only=${readOnly ? 'yes' : undefined}>
    <a class="skip" href="#main" onClick=${(/** @type {Event} */ e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>Skip to content</a>
    <header class="topbar">
      <button type="button" class="menu-button" aria-expanded=${menu ? 'true' : 'false'} aria-controls="sidebar" ref=${menuButton}
        onClick=${() => setMenu(!menu)}>Menu</button>
      <span class="brand">sendonce</span>
      <div class="who">
        <span class="account" title=${session.account_name}>${session.account_name}</span>
        ${readOnly && html`<span class="tag" title="This session may read, not change">read-only</span>`}
        <button type="button" class="link" onClick=${signOut}>Sign out</button>
      </div>
    </header>
    <${Sidebar} here=${r.page} open=${menu} setOpen=${setMenu} button=${menuButton} />
    <main id="main" tabindex="-1">${body}</main>
    <footer><small>Times are in your time zone, ${timeZone}; hover one for the exact time.</small></footer>
    <${Toasts} />
  </div>`;
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(html`<${App} />`, root);
}
