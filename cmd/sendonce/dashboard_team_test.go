package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
)

// totpAt is the RFC 6238 code of a base32 secret for the 30-second step of t:
// what an authenticator app shows (written here so the test does not lean on the
// server's own implementation).
func totpAt(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	key, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(strings.TrimRight(secret, "=")))
	require.NoError(t, err)
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(at.Unix()/30))
	m := hmac.New(sha1.New, key)
	m.Write(msg[:])
	sum := m.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	v := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	return fmt.Sprintf("%06d", v%1_000_000)
}

// invitationToken reads the token of the newest invitation mailed to email from
// the account's dev inbox (where `sendonce dev` shows the service's own mail).
func invitationToken(t *testing.T, base, key, email string) string {
	t.Helper()
	return mailedToken(t, base, key, email, "invitation")
}

// mailedToken reads the token of the newest link of page (invitation,
// reset-password, sign-in) mailed to email, from the account's dev inbox.
func mailedToken(t *testing.T, base, key, email, page string) string {
	t.Helper()
	link := regexp.MustCompile(`#/` + page + `/([a-z0-9_]+)`)
	var token string
	require.Eventually(t, func() bool {
		inbox := apiCall(t, base, key, http.MethodGet, "/v1/dev/inbox", nil)
		for _, m := range inbox["data"].([]any) {
			msg := m.(map[string]any)
			if msg["to"] == email {
				if g := link.FindStringSubmatch(msg["text"].(string)); g != nil {
					token = g[1]
					return true
				}
			}
		}
		return false
	}, 30*time.Second, 100*time.Millisecond, "no %s link for %s in the dev inbox", page, email)
	return token
}

// acrossReload waits until js is true on the page, through a reload the page
// starts itself (a poll cut short by the navigation is started again).
func acrossReload(t *testing.T, b *pagesBrowser, js string) {
	t.Helper()
	deadline := time.Now().Add(b.within)
	for {
		ok, err := chromedp.Run(b.ctx, chromedp.Poll[bool](`(() => { try { return !!(`+js+`); } catch (e) { return false; } })()`,
			chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(time.Until(deadline))))
		if err == nil && ok {
			return
		}
		require.True(t, time.Now().Before(deadline), "waiting for %s: %v", js, err)
	}
}

// noWriteControl is the script that lists the controls a read-only page still
// shows that would change something (none is the answer wanted). Selects filter
// lists; the one that changes something (a member's role) is checked apart.
const noWriteControl = `[...document.querySelectorAll('main button, main form, main a.button, main input[type=checkbox]')]
  .filter((e) => e.offsetParent !== null && !e.closest('[data-reads]') && !e.closest('form[role=search]') && !e.closest('.pager'))
  .map((e) => e.tagName + ' ' + e.textContent.trim().slice(0, 40)).join('; ')`

// TestDashboardTeam drives the team pages in headless Chromium: an admin's session
// invites three people and turns four eyes on (the Team page); a viewer accepts
// through the mailed link (read from the dev inbox), sets a password, enables a
// second factor, changes the password, signs in again with password and code,
// switches accounts, and sees no control that changes something; an editor drafts
// a campaign and sees no approval; an approver approves it and sees no edit; the audit log page and the
// campaign page name both. axe-core finds nothing serious or critical on any page,
// and none of them scrolls sideways at 390 px.
func TestDashboardTeam(t *testing.T) {
	bin, axe := chromiumPath(t), axeScript(t)
	base, cfg := pagesService(t, manyInFlight)
	b := newPagesBrowser(t, bin, axe)
	bg := context.Background()
	pool, err := openWithTimeout(bg, cfg)
	require.NoError(t, err)
	defer pool.Close()
	_, key, err := account.NewService(pool).Create(bg, "team")
	require.NoError(t, err)
	_, key2, err := account.NewService(pool).Create(bg, "team-two")
	require.NoError(t, err)
	apiCall(t, base, key, http.MethodPost, "/v1/subscribers", map[string]any{"email": "reader@example.com"})

	helpers := func() {
		b.eval(pageHelpers)
		b.eval(`window.confirm = () => true; true`)
	}
	// fresh opens url in a new document (a link whose address differs only in its
	// fragment would otherwise not load the page again).
	fresh := func(url string) {
		b.navigate("about:blank")
		b.navigate(url)
		b.axeIn = false // a new document: axe-core is loaded again
		acrossReload(t, b, `document.querySelector('main')`)
		helpers()
	}
	h1 := func(text string) {
		b.wait(fmt.Sprintf(`(document.querySelector('main h1') || {}).textContent === %q`, text))
	}
	narrow := func(name string) {
		require.NoError(t, chromedp.Do(b.ctx, chromedp.EmulateViewport(390, 844)))
		b.wait(`innerWidth === 390`)
		// Waited for, not read once: the page lays out again after the viewport
		// changes (a read right after innerWidth turns 390 saw 403 now and then).
		// A page that really scrolls sideways never gets there, and the wait fails.
		b.fits(name)
		require.NoError(t, chromedp.Do(b.ctx, chromedp.EmulateViewport(1280, 900)))
		b.wait(`innerWidth === 1280`)
	}
	signOut := func() {
		b.eval(`__t.click('Sign out')`)
		b.wait(`__t.field('Email address')`)
	}

	// An admin's session (the account's key, through a login link) invites.
	link, err := newLoginLink(bg, pool, "team", base)
	require.NoError(t, err)
	fresh(link)
	b.wait(`document.querySelector('nav')`)
	helpers()
	b.open("#/team", "Team")
	for _, p := range [][2]string{{"vera@example.com", "Viewer: reads only"}, {"ed@example.com", "Editor: audience, templates, drafts"}, {"april@example.com", "Approver: approves, pauses, cancels"}} {
		b.eval(fmt.Sprintf(`__t.fill('Invite by email', %q) && __t.choose('Role', %q)`, p[0], p[1]))
		b.eval(`__t.click('Send invitation')`)
		b.wait(fmt.Sprintf(`document.querySelector('[data-invitation=%q]')`, p[0]))
	}
	// Four eyes on, from the page's security settings.
	b.eval(`(() => { const c = [...document.querySelectorAll('label')].find((l) => l.textContent.includes('Four eyes')).querySelector('input'); c.click(); return true; })()`)
	b.wait(`__t.text().includes('Four eyes is on')`)
	require.Equal(t, true, apiCall(t, base, key, http.MethodGet, "/v1/account", nil)["four_eyes"])
	b.audit("team")
	narrow("team")
	b.open("#/audit", "Audit log")
	b.wait(`document.querySelector('[data-audit="invitation.create"]')`)
	b.audit("audit-log")
	narrow("audit log")
	signOut()
	b.audit("sign-in")
	narrow("sign-in")

	// The viewer is also invited to a second account and accepts there first (no
	// browser: a person of two accounts is what the switcher needs).
	apiCall(t, base, key2, http.MethodPost, "/v1/invitations", map[string]any{"email": "vera@example.com", "role": "viewer"})
	other := invitationToken(t, base, key2, "vera@example.com")

	// The viewer accepts through the mailed link and chooses a password.
	const password = "a long enough password"
	fresh(base + "/app#/invitation/" + invitationToken(t, base, key, "vera@example.com"))
	b.wait(`__t.text().includes('Accept the invitation')`)
	require.NotContains(t, b.str(`location.href`), "/invitation/", "the token leaves the address bar")
	b.audit("invitation")
	narrow("invitation")
	b.eval(fmt.Sprintf(`__t.fill('New password', %q)`, password))
	b.eval(`__t.click('Accept and set password')`)
	b.wait(`document.querySelector('nav')`)
	resp, err := http.Post(base+"/v1/invitations/accept", "application/json", strings.NewReader(`{"token":"`+other+`"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode, "the second account's invitation accepted")
	// A person of two accounts has the account switcher in the top bar: loaded
	// afresh, the page shows it (its list was read when the page opened, which
	// may have been before the second acceptance), and the pages below must fit
	// a phone with it (a 186 px select once reached 13 px past a 390 px screen).
	fresh(base + "/app#/overview")
	b.wait(`document.querySelector('.switcher select')`)

	// A second factor, confirmed with a code of the step before now (an app a little
	// behind), so that the sign-in below, with the code of now, is not a replay.
	b.open("#/profile", "Profile")
	b.wait(`__t.click('Set up a second factor')`) // once the page knows it is off
	b.wait(`document.querySelector('[data-secret]')`)
	secret := b.str(`document.querySelector('[data-secret]').value`)
	require.Contains(t, b.str(`__t.field('Setup address').value`), "otpauth://totp/")
	b.eval(fmt.Sprintf(`__t.fill('Code from the app', %q)`, totpAt(t, secret, time.Now().Add(-30*time.Second))))
	b.eval(`__t.click('Turn on')`)
	b.wait(`document.querySelectorAll('[data-recovery-codes] code').length === 10`)
	b.audit("profile")
	b.eval(`__t.click('I have saved them')`)
	b.wait(`__t.text().includes('On: signing in asks for a code')`)
	narrow("profile")
	// A new password, proven with the current one.
	const newPassword = "another long enough password"
	b.eval(fmt.Sprintf(`__t.fill('Current password', %q) && __t.fill('New password', %q)`, password, newPassword))
	b.eval(`__t.click('Change password')`)
	b.wait(`__t.text().includes('Your password is changed')`)
	signOut()

	// Signing in again asks for the code after the password.
	b.eval(fmt.Sprintf(`__t.fill('Email address', 'vera@example.com') && __t.fill('Password', %q)`, newPassword))
	b.eval(`__t.click('Sign in')`)
	b.wait(`__t.text().includes('Second factor') && __t.field('Code')`)
	b.audit("second-factor")
	b.eval(fmt.Sprintf(`__t.fill('Code', %q)`, totpAt(t, secret, time.Now())))
	b.eval(`__t.click('Continue')`)
	b.wait(`document.querySelector('nav')`)
	helpers()

	// A viewer sees no control that would change something, on the pages that
	// have them for others.
	apiCall(t, base, key, http.MethodPost, "/v1/campaigns", map[string]any{"name": "Seen by all", "subject": "Hi", "from_email": "news@example.com", "text_template": "Hello"})
	b.open("#/campaigns", "Campaigns")
	b.wait(`__t.text().includes('Seen by all')`)
	require.Empty(t, b.str(noWriteControl), "write controls on the campaigns page of a viewer")
	b.eval(`__t.click('Seen by all')`)
	h1("Seen by all")
	b.wait(`document.querySelector('[data-campaign-people]')`)
	require.Empty(t, b.str(noWriteControl), "write controls on a campaign page of a viewer")
	b.open("#/team", "Team")
	b.wait(`document.querySelector('[data-member="vera@example.com"]')`)
	require.Empty(t, b.str(noWriteControl), "write controls on the team page of a viewer")
	require.Equal(t, "0", b.str(`String(document.querySelectorAll('main select').length)`), "a viewer is offered no role to change")

	// The switcher moves to the other account, with a new session.
	b.wait(`__t.field('Account') && __t.field('Account').options.length === 2`)
	b.eval(`__t.fill('Account', [...__t.field('Account').options].find((o) => o.textContent.startsWith('team-two')).value)`)
	// The page loads again in the new session: wait through the reload.
	acrossReload(t, b, `[...document.querySelectorAll('.who > span')].some((s) => s.textContent === 'team-two') && !!document.querySelector('main h1')`)
	helpers()
	signOut()

	// personSignsIn accepts an invitation with a password and lands signed in.
	personSignsIn := func(email string) {
		fresh(base + "/app#/invitation/" + invitationToken(t, base, key, email))
		b.wait(`__t.field('New password')`)
		b.eval(fmt.Sprintf(`__t.fill('New password', %q)`, password))
		b.eval(`__t.click('Accept and set password')`)
		b.wait(`document.querySelector('nav')`)
		helpers()
	}

	// The editor drafts a campaign, and is offered no approval.
	personSignsIn("ed@example.com")
	b.open("#/campaigns/new", "New campaign")
	b.eval(`__t.fill('Name', 'Spring news') && __t.fill('From address', 'news@example.com') && __t.fill('Subject', 'Spring') && __t.fill('Text', 'Hello in spring')`)
	b.eval(`__t.click('Create draft')`)
	h1("Spring news")
	b.wait(`document.querySelector('[data-who="Created by"]')`)
	require.Contains(t, b.str(`document.querySelector('[data-who="Created by"]').textContent`), "ed@example.com")
	require.Equal(t, "false", b.str(`String([...document.querySelectorAll('main button')].some((e) => e.textContent.startsWith('Approve')))`))
	require.Equal(t, "true", b.str(`String([...document.querySelectorAll('main button')].some((e) => e.textContent === 'Edit draft'))`))
	id := strings.TrimPrefix(b.str(`location.hash`), "#/campaigns/")
	_, err = strconv.Atoi(id)
	require.NoError(t, err)
	signOut()

	// The approver approves it, and is offered no edit.
	personSignsIn("april@example.com")
	// Nor any change of the audience, templates or sequences, which are an editor's.
	for _, p := range [][2]string{{"#/subscribers", "Subscribers"}, {"#/lists", "Lists"}, {"#/templates", "Templates"}, {"#/sequences", "Sequences"}} {
		b.open(p[0], p[1])
		b.wait(`!document.querySelector('main .loading')`)
		require.Empty(t, b.str(noWriteControl), "write controls on %s of an approver", p[0])
	}
	b.open("#/campaigns/"+id, "Spring news")
	b.wait(`[...document.querySelectorAll('main button')].some((e) => e.textContent === 'Approve and send now')`)
	require.Equal(t, "false", b.str(`String([...document.querySelectorAll('main button')].some((e) => e.textContent === 'Edit draft'))`))
	b.eval(`__t.click('Approve and send now')`)
	b.wait(`[...document.querySelectorAll('dialog button')].some((e) => e.textContent === 'Approve and send' && !e.disabled)`)
	b.eval(`__t.click('Approve and send')`)
	b.wait(`(document.querySelector('[data-status]') || {}).dataset.status !== 'draft'`)
	b.wait(`document.querySelector('[data-who="Approved by"]')`)
	require.Contains(t, b.str(`document.querySelector('[data-who="Approved by"]').textContent`), "april@example.com")
	require.Contains(t, b.str(`document.querySelector('[data-who="Created by"]').textContent`), "ed@example.com")

	// The audit log names both, from its page, filtered to the campaign.
	b.eval(`__t.click('the audit log of this campaign')`)
	h1("Audit log")
	b.wait(`document.querySelector('[data-audit="campaign.approve"]') && document.querySelector('[data-audit="campaign.create"]')`)
	require.Equal(t, "april@example.com", b.str(`document.querySelector('[data-audit="campaign.approve"] [data-actor]').dataset.actor`))
	require.Equal(t, "ed@example.com", b.str(`document.querySelector('[data-audit="campaign.create"] [data-actor]').dataset.actor`))
	// The actor filter: only the editor's entries.
	b.eval(`__t.choose('Actor', 'ed@example.com') && __t.fill('Target id', '')`)
	b.eval(`__t.click('Filter')`)
	b.wait(`!document.querySelector('[data-audit="campaign.approve"]') && document.querySelector('[data-audit="campaign.create"]')`)
	b.audit("audit-filtered")
	signOut()

	// Forgot password: the mailed link's page sets a new one, which then signs in.
	b.eval(`__t.click('Forgot your password?')`)
	b.eval(`__t.fill('Email address', 'ed@example.com')`)
	b.eval(`__t.click('Send me a reset link')`)
	b.wait(`__t.text().includes('a link to choose a new password is on its way')`)
	fresh(base + "/app#/reset-password/" + mailedToken(t, base, key, "ed@example.com", "reset-password"))
	b.wait(`__t.text().includes('Choose a new password')`)
	b.audit("reset-password")
	b.eval(`__t.fill('New password', 'ed has a new long password')`)
	b.eval(`__t.click('Set password')`)
	b.wait(`__t.text().includes('Your password is changed')`)
	b.eval(`__t.fill('Email address', 'ed@example.com') && __t.fill('Password', 'ed has a new long password')`)
	b.eval(`__t.click('Sign in')`)
	b.wait(`document.querySelector('nav')`)
	helpers()
	signOut()

	// An email sign-in link signs in without a password.
	b.eval(`__t.click('Email me a sign-in link')`)
	b.eval(`__t.fill('Email address', 'april@example.com')`)
	b.eval(`__t.click('Send me a link')`)
	b.wait(`__t.text().includes('a sign-in link is on its way')`)
	b.audit("sign-in-link")
	fresh(base + "/app#/sign-in/" + mailedToken(t, base, key, "april@example.com", "sign-in"))
	acrossReload(t, b, `document.querySelector('nav') && document.querySelector('.who').textContent.includes('team')`)
	require.NotContains(t, b.str(`location.href`), "/sign-in/", "the token leaves the address bar")
}
