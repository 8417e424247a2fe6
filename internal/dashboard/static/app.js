// The dashboard's shell: sign-in, navigation by the address's fragment, and the
// pages. Every page is a client of the public /v1 API.
import { html, render, useState, useEffect, useRef } from './preact-htm.js';
import { api, setCSRF, closeStream } from './api.js';
import { NotFound, timeZone, Toasts } from './ui.js';
import { Overview } from './overview.js';
import { Campaigns, CampaignNew, CampaignPage } from './campaigns.js';
import { Subscribers } from './subscribers.js';
import { Segments, SegmentPage } from './segments.js';
import { Suppressions } from './suppressions.js';
import { Media } from './media.js';
import { Inbox } from './inbox.js';
import { Keys } from './keys.js';
import { Templates } from './templates.js';
import { Layouts } from './layouts.js';
import { Messages, MessagePage } from './messages.js';
import { Senders, SenderPage } from './senders.js';
import { EventEndpoints, EndpointPage } from './endpoints.js';
import { Lists, ListPage } from './lists.js';
import { SubscriberPage } from './subscriber.js';
import { Sequences, SequenceNew, SequencePage } from './sequences.js';
import { SignIn } from './signin.js';
import { Team } from './team.js';
import { Profile, AccountSwitcher } from './profile.js';
import { AuditLog } from './audit.js';
import { setSession as setPermissions, can } from './perm.js';

const pages = [
  ['overview', 'Overview'],
  ['campaigns', 'Campaigns'],
  ['sequences', 'Sequences'],
  ['subscribers', 'Subscribers'],
  ['lists', 'Lists'],
  ['templates', 'Templates'],
  ['layouts', 'Layouts'],
  ['media', 'Media'],
  ['segments', 'Segments'],
  ['suppressions', 'Suppressions'],
  ['messages', 'Messages'],
  ['senders', 'Senders'],
  ['endpoints', 'Event endpoints'],
  ['inbox', 'Dev inbox'],
  ['keys', 'API keys'],
  ['team', 'Team'],
  ['audit', 'Audit log'],
  ['profile', 'Profile'],
];

// The sidebar's groups, in order; a page not named here is under Settings.
const groups = ['Insights', 'Audience', 'Sending', 'Settings'];
/** @type {Record<string, string>} */
const groupOf = {
  overview: 'Insights', messages: 'Insights',
  subscribers: 'Audience', lists: 'Audience', segments: 'Audience', suppressions: 'Audience',
  campaigns: 'Sending', sequences: 'Sending', templates: 'Sending', layouts: 'Sending', media: 'Sending', senders: 'Sending', inbox: 'Sending',
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

/** The permission every change of a page needs (docs/teams.md). @type {Record<string,string>} */
const pageWrites = {
  subscribers: 'audience:write', lists: 'audience:write', segments: 'audience:write', suppressions: 'audience:write',
  templates: 'templates:write', layouts: 'templates:write', media: 'templates:write', senders: 'senders:manage', endpoints: 'webhooks:manage', keys: 'keys:manage',
};

// The pages a mailed link opens (its token in the fragment): they are shown
// whether or not this browser is signed in, and never reach the server's logs.
const linkPages = ['login', 'sign-in', 'invitation', 'reset-password'];

function route() {
  const parts = location.hash.replace(/^#\/?/, '').split('/');
  return { page: parts[0] || 'overview', arg: parts[1] || '' };
}

function App() {
  const [session, setSession] = useState(/** @type {any} */ (undefined));
  const [note, setNote] = useState('');
  const [r, setRoute] = useState(route());
  const [menu, setMenu] = useState(false);
  const menuButton = useRef(/** @type {HTMLButtonElement|null} */ (null));
  const [link, setLink] = useState(/** @type {{page:string,arg:string}|null} */ (null));
  useEffect(() => {
    // A login link opened in a tab that is already signed in: start over, so the
    // link is exchanged (and removed from the address bar) like on a first load.
    const onHash = () => {
      setMenu(false);
      if (linkPages.includes(route().page)) location.reload(); else setRoute(route());
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
    if (linkPages.includes(here.page) && here.arg) {
      // A person's mailed link (sign-in, invitation, password reset): the sign-in
      // page takes it from here, out of the address bar too.
      history.replaceState(null, '', location.pathname + '#/overview');
      setRoute(route());
      setLink(here);
      setSession(null);
      return;
    }
    api('GET', '/v1/session').then(signedIn, () => setSession(null));
  }, []);
  /** @param {any} s */
  function signedIn(s) {
    setCSRF(s.csrf_token);
    setPermissions(s);
    setLink(null);
    setSession(s);
  }
  async function signOut() {
    closeStream();
    try { await api('DELETE', '/v1/session'); } catch { /* the session is gone either way */ }
    setCSRF(null);
    setPermissions(null);
    setSession(null);
    setNote('You are signed out.');
    location.hash = '#/overview';
  }
  if (session === undefined) return html`<p class="loading">Loading…</p>`;
  if (session === null) return html`<${SignIn} key=${link ? link.page : 'none'} onSignedIn=${signedIn} note=${note} link=${link} />`;
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
    case 'media': body = r.arg ? html`<${NotFound} />` : html`<${Media} />`; break;
    case 'layouts': body = r.arg ? html`<${NotFound} />` : html`<${Layouts} />`; break;
    case 'inbox': body = r.arg ? html`<${NotFound} />` : html`<${Inbox} />`; break;
    case 'keys': body = r.arg ? html`<${NotFound} />` : html`<${Keys} />`; break;
    case 'overview': body = html`<${Overview} />`; break;
    case 'team': body = r.arg ? html`<${NotFound} />` : html`<${Team} />`; break;
    case 'audit': body = html`<${AuditLog} key=${r.arg} arg=${r.arg} />`; break;
    case 'profile': body = r.arg ? html`<${NotFound} />` : html`<${Profile} />`; break;
    default: body = html`<${NotFound} />`;
  }
  // A member without the second factor their account requires can do nothing
  // else until they set it up.
  if (session.user && session.user.needs_two_factor) body = html`<${Profile} enrol />`;
  // A read-only session (a read-only key, a viewer: no permission but reads) sees no
  // control that would change something: the API would refuse it, so offering it is
  // a trap (style.css hides them under data-read-only).
  const readOnly = !(session.permissions || []).some((/** @type {string} */ p) => !p.endsWith(':read'));
  // A page whose changes all need one permission the session lacks (an approver on
  // the audience pages) is read-only for it, the same way; campaigns, sequences
  // and the team page show each control by its own permission (perm.js).
  const needs = pageWrites[r.page];
  const pageReadOnly = readOnly || (needs !== undefined && !can(needs));
  return html`<div class="shell" data-read-only=${pageReadOnly ? 'yes' : undefined}>
    <a class="skip" href="#main" onClick=${(/** @type {Event} */ e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>Skip to content</a>
    <header class="topbar">
      <button type="button" class="menu-button" aria-expanded=${menu ? 'true' : 'false'} aria-controls="sidebar" ref=${menuButton}
        onClick=${() => setMenu(!menu)}>Menu</button>
      <span class="brand">sendonce</span>
      <div class="who">
        <${AccountSwitcher} accountId=${session.account_id} />
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
