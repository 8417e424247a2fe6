package webhook_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
	"github.com/sendonce/sendonce/internal/webhook"
)

// env is one test's database, account and service with a settable clock.
type env struct {
	t       *testing.T
	ctx     context.Context
	pool    *pgxpool.Pool
	account int64
	now     time.Time
	svc     *webhook.Service
}

func setup(t *testing.T, opts webhook.Options) *env {
	t.Helper()
	e := &env{t: t, ctx: context.Background(), pool: dbtest.New(t), now: time.Now()}
	acc, err := store.New(e.pool).AccountCreate(e.ctx, "a")
	require.NoError(t, err)
	e.account = acc.ID
	opts.Now = func() time.Time { return e.now }
	e.svc = webhook.NewService(e.pool, opts)
	return e
}

func (e *env) create(in webhook.CreateInput) (webhook.Endpoint, webhook.Credentials) {
	ep, creds, err := e.svc.Create(e.ctx, e.account, in)
	require.NoError(e.t, err)
	return ep, creds
}

// suppressed returns the reason email is suppressed for, or "" when it is not.
func (e *env) suppressed(email string) string {
	var reason string
	_ = e.pool.QueryRow(e.ctx, `SELECT reason FROM suppressions WHERE account_id = $1 AND email_lower = $2`,
		e.account, email).Scan(&reason)
	return reason
}

func (e *env) count(table string) int {
	var n int
	require.NoError(e.t, e.pool.QueryRow(e.ctx, `SELECT count(*) FROM `+table).Scan(&n))
	return n
}

// send inserts a sent message to email with the given ids and returns a func
// reading its feedback.
func (e *env) send(email, jobID, providerMessageID string) func() string {
	fx := testfactory.New(e.pool)
	campaignID := fx.Campaign(e.t, e.account, testfactory.Campaign{FromEmail: "f@example.com"})
	fx.Send(e.t, e.account, campaignID, 1, testfactory.Send{Email: email, JobID: jobID, Status: "sent",
		ProviderMessageID: providerMessageID})
	return func() string {
		var fb *string
		require.NoError(e.t, e.pool.QueryRow(e.ctx, `SELECT feedback FROM sends WHERE job_id = $1`, jobID).Scan(&fb))
		if fb == nil {
			return ""
		}
		return *fb
	}
}

func requireCode(t *testing.T, err error, code apperr.Code) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, code, apperr.CodeOf(err), "%v", err)
}

// signStandard signs like a Standard Webhooks sender: v1,base64(HMAC(id.ts.body)).
func signStandard(t *testing.T, secret, prefix, id string, ts time.Time, body []byte) http.Header {
	key, err := base64.StdEncoding.DecodeString(secret[len("whsec_"):])
	require.NoError(t, err)
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s.%d.%s", id, ts.Unix(), body)
	h := http.Header{}
	h.Set(prefix+"-id", id)
	h.Set(prefix+"-timestamp", strconv.FormatInt(ts.Unix(), 10))
	h.Set(prefix+"-signature", "v1,bm90LWl0 v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	return h
}

func TestStandardWebhook(t *testing.T) {
	t.Parallel()
	e := setup(t, webhook.Options{})
	ep, creds := e.create(webhook.CreateInput{Source: "standard", Name: "crm"})
	require.Regexp(t, `^whsec_[A-Za-z0-9+/=]{40,}$`, creds.Secret)
	body := []byte(`{"type":"subscriber.unsubscribed","timestamp":"2026-01-01T00:00:00Z","data":{"email":"Ada@Example.com"}}`)

	// Tampered body, wrong secret, stale and future timestamps, missing headers: 401, nothing changes.
	h := signStandard(t, creds.Secret, "webhook", "msg_1", e.now, body)
	_, err := e.svc.Deliver(e.ctx, "standard", ep.ID, h, []byte(`{"type":"subscriber.unsubscribed","data":{"email":"bob@example.com"}}`))
	requireCode(t, err, apperr.Unauthorized)
	other := "whsec_" + base64.StdEncoding.EncodeToString([]byte("another-secret-of-32-bytes......"))
	_, err = e.svc.Deliver(e.ctx, "standard", ep.ID, signStandard(t, other, "webhook", "msg_1", e.now, body), body)
	requireCode(t, err, apperr.Unauthorized)
	_, err = e.svc.Deliver(e.ctx, "standard", ep.ID, signStandard(t, creds.Secret, "webhook", "msg_1", e.now.Add(-6*time.Minute), body), body)
	requireCode(t, err, apperr.Unauthorized)
	_, err = e.svc.Deliver(e.ctx, "standard", ep.ID, signStandard(t, creds.Secret, "webhook", "msg_1", e.now.Add(6*time.Minute), body), body)
	requireCode(t, err, apperr.Unauthorized)
	_, err = e.svc.Deliver(e.ctx, "standard", ep.ID, http.Header{}, body)
	requireCode(t, err, apperr.Unauthorized)
	// Signed for another scheme's headers: the resend prefix is not read by standard.
	_, err = e.svc.Deliver(e.ctx, "standard", ep.ID, signStandard(t, creds.Secret, "svix", "msg_1", e.now, body), body)
	requireCode(t, err, apperr.Unauthorized)
	require.Empty(t, e.suppressed("ada@example.com"))
	require.Zero(t, e.count("webhook_events"))

	// Unknown endpoint, wrong source for the endpoint, unknown source: unauthorized
	// like a bad signature, with the same message, so endpoint ids cannot be probed.
	_, badSig := e.svc.Deliver(e.ctx, "standard", ep.ID, signStandard(t, other, "webhook", "x", e.now, body), body)
	requireCode(t, badSig, apperr.Unauthorized)
	for _, probe := range []struct {
		source string
		id     int64
	}{{"standard", ep.ID + 1000}, {"resend", ep.ID}, {"nope", ep.ID}} {
		_, err = e.svc.Deliver(e.ctx, probe.source, probe.id, h, body)
		requireCode(t, err, apperr.Unauthorized)
		require.Equal(t, badSig.(*apperr.Error).Message, err.(*apperr.Error).Message, probe)
	}

	// Valid (one of several signatures matches, 4 minutes old): suppressed, once.
	e.now = e.now.Add(4 * time.Minute)
	res, err := e.svc.Deliver(e.ctx, "standard", ep.ID, h, body)
	require.NoError(t, err)
	require.Equal(t, webhook.Result{Events: 1, Applied: 1, Suppressed: 1}, res)
	require.Equal(t, "unsubscribe", e.suppressed("ada@example.com"))

	// Replay: the same webhook-id changes nothing, even re-signed with a new timestamp.
	res, err = e.svc.Deliver(e.ctx, "standard", ep.ID, signStandard(t, creds.Secret, "webhook", "msg_1", e.now, body), body)
	require.NoError(t, err)
	require.Equal(t, webhook.Result{Events: 1, Replayed: 1}, res)
	require.Equal(t, 1, e.count("webhook_events"))
}

func TestStandardBounceComplaintAndSoftBounceLimit(t *testing.T) {
	t.Parallel()
	e := setup(t, webhook.Options{SoftBounceLimit: 3, SoftBounceWindow: time.Hour})
	ep, creds := e.create(webhook.CreateInput{Source: "standard"})
	post := func(id, body string) webhook.Result {
		res, err := e.svc.Deliver(e.ctx, "standard", ep.ID, signStandard(t, creds.Secret, "webhook", id, e.now, []byte(body)), []byte(body))
		require.NoError(t, err)
		return res
	}
	post("c1", `{"type":"subscriber.complained","data":{"email":"c@example.com"}}`)
	require.Equal(t, "complaint", e.suppressed("c@example.com"))
	post("h1", `{"type":"subscriber.bounced","data":{"email":"h@example.com"}}`)
	require.Equal(t, "hard_bounce", e.suppressed("h@example.com"))

	soft := `{"type":"subscriber.bounced","data":{"email":"s@example.com","bounce_type":"soft"}}`
	post("s1", soft)
	e.now = e.now.Add(2 * time.Hour) // s1 leaves the window
	post("s2", soft)
	post("s3", soft)
	require.Empty(t, e.suppressed("s@example.com"), "two soft bounces within the window")
	require.Equal(t, 2, e.count("soft_bounces"), "the bounce that left the window was deleted")
	post("s3", soft) // a replay does not count
	require.Empty(t, e.suppressed("s@example.com"))
	res := post("s4", soft)
	require.Equal(t, 1, res.Suppressed)
	require.Equal(t, "hard_bounce", e.suppressed("s@example.com"))

	// Events we do not act on are accepted and not stored.
	res = post("o1", `{"type":"email.opened","data":{"email":"o@example.com"}}`)
	require.Equal(t, webhook.Result{Events: 1}, res)
	require.Empty(t, e.suppressed("o@example.com"))
}

// TestSoftBouncesCountDistinctMessages: providers report a delay on every retry of
// one message (SendGrid deferred, Mailgun temporary failure, SES DeliveryDelay,
// Resend delivery_delayed), so the soft-bounce limit counts messages, not events:
// one message retried three times suppresses nothing.
func TestSoftBouncesCountDistinctMessages(t *testing.T) {
	t.Parallel()
	e := setup(t, webhook.Options{SoftBounceLimit: 3, SoftBounceWindow: time.Hour})
	ep, creds := e.create(webhook.CreateInput{Source: "standard"})
	post := func(id, data string) webhook.Result {
		body := []byte(`{"type":"subscriber.bounced","data":{"email":"d@example.com","bounce_type":"soft"` + data + `}}`)
		res, err := e.svc.Deliver(e.ctx, "standard", ep.ID, signStandard(t, creds.Secret, "webhook", id, e.now, body), body)
		require.NoError(t, err)
		return res
	}
	for i := range 4 {
		post(fmt.Sprintf("retry-%d", i), `,"provider_message_id":"pm-1","job_id":"job-1"`)
		e.now = e.now.Add(time.Minute)
	}
	require.Empty(t, e.suppressed("d@example.com"), "four delays of one message are one soft bounce")
	require.Equal(t, 1, e.count("soft_bounces"))

	post("other-1", `,"job_id":"job-2"`) // a second message, known by our job id only
	post("other-1b", `,"job_id":"job-2"`)
	require.Empty(t, e.suppressed("d@example.com"), "two messages")
	res := post("third", `,"provider_message_id":"pm-3"`)
	require.Equal(t, 1, res.Suppressed, "the third distinct message reaches the limit")
	require.Equal(t, "hard_bounce", e.suppressed("d@example.com"))
}

func TestRotationGracePeriod(t *testing.T) {
	t.Parallel()
	e := setup(t, webhook.Options{})
	ep, old := e.create(webhook.CreateInput{Source: "standard"})
	grace := int64(3600)
	_, fresh, err := e.svc.Rotate(e.ctx, e.account, ep.ID, webhook.RotateInput{GraceSeconds: &grace})
	require.NoError(t, err)
	require.NotEqual(t, old.Secret, fresh.Secret)
	body := []byte(`{"type":"subscriber.unsubscribed","data":{"email":"a@example.com"}}`)
	_, err = e.svc.Deliver(e.ctx, "standard", ep.ID, signStandard(t, old.Secret, "webhook", "r1", e.now, body), body)
	require.NoError(t, err, "the old secret verifies during the grace period")
	_, err = e.svc.Deliver(e.ctx, "standard", ep.ID, signStandard(t, fresh.Secret, "webhook", "r2", e.now, body), body)
	require.NoError(t, err)
	e.now = e.now.Add(time.Hour + time.Second)
	_, err = e.svc.Deliver(e.ctx, "standard", ep.ID, signStandard(t, old.Secret, "webhook", "r3", e.now, body), body)
	requireCode(t, err, apperr.Unauthorized)

	// Tenant isolation and delete.
	other, err := store.New(e.pool).AccountCreate(e.ctx, "b")
	require.NoError(t, err)
	_, _, err = e.svc.Rotate(e.ctx, other.ID, ep.ID, webhook.RotateInput{})
	requireCode(t, err, apperr.NotFound)
	requireCode(t, e.svc.Delete(e.ctx, other.ID, ep.ID), apperr.NotFound)
	list, err := e.svc.List(e.ctx, other.ID, 0, 10)
	require.NoError(t, err)
	require.Empty(t, list)
	require.NoError(t, e.svc.Delete(e.ctx, e.account, ep.ID))
	_, err = e.svc.Deliver(e.ctx, "standard", ep.ID, signStandard(t, fresh.Secret, "webhook", "r4", e.now, body), body)
	requireCode(t, err, apperr.Unauthorized)
}

// TestRotateTwiceKeepsEverySecretUntilItsOwnExpiry: a second rotation within the
// grace period must not drop the original secret at once; each rotated-out secret verifies until its own expiry and not after.
func TestRotateTwiceKeepsEverySecretUntilItsOwnExpiry(t *testing.T) {
	t.Parallel()
	e := setup(t, webhook.Options{})
	ep, s0 := e.create(webhook.CreateInput{Source: "standard"})
	start := e.now
	hour, twoHours := int64(3600), int64(7200)
	_, s1, err := e.svc.Rotate(e.ctx, e.account, ep.ID, webhook.RotateInput{GraceSeconds: &hour})
	require.NoError(t, err)
	e.now = start.Add(10 * time.Minute)
	_, s2, err := e.svc.Rotate(e.ctx, e.account, ep.ID, webhook.RotateInput{GraceSeconds: &twoHours})
	require.NoError(t, err)

	body := []byte(`{"type":"email.opened","data":{"email":"a@example.com"}}`)
	n := 0
	verifies := func(secret string) bool {
		n++
		_, err := e.svc.Deliver(e.ctx, "standard", ep.ID, signStandard(t, secret, "webhook", fmt.Sprint("r", n), e.now, body), body)
		return err == nil
	}
	require.True(t, verifies(s0.Secret), "the original secret verifies until its own expiry")
	require.True(t, verifies(s1.Secret))
	require.True(t, verifies(s2.Secret))

	e.now = start.Add(time.Hour + time.Second) // s0's grace is over, s1's is not
	require.False(t, verifies(s0.Secret))
	require.True(t, verifies(s1.Secret))
	require.True(t, verifies(s2.Secret))

	e.now = start.Add(10*time.Minute + 2*time.Hour + time.Second)
	require.False(t, verifies(s0.Secret))
	require.False(t, verifies(s1.Secret))
	require.True(t, verifies(s2.Secret))
}

func TestCreateValidation(t *testing.T) {
	t.Parallel()
	e := setup(t, webhook.Options{})
	for _, in := range []webhook.CreateInput{
		{Source: "smoke-signals"},
		{Source: "mailgun"},                          // signing key required
		{Source: "resend", Secret: "not-whsec"},      // must be whsec_
		{Source: "sendgrid", Secret: "bm90IGEga2V5"}, // not a public key
		{Source: "ses"},                              // topic ARNs required
		{Source: "postmark", Secret: "mine"},         // generated only
		{Source: "standard", TopicARNs: []string{"arn:aws:sns:x"}},
	} {
		_, _, err := e.svc.Create(e.ctx, e.account, in)
		requireCode(t, err, apperr.Invalid)
	}
	require.Zero(t, e.count("webhook_endpoints"))
}

func TestResendWebhook(t *testing.T) {
	t.Parallel()
	e := setup(t, webhook.Options{})
	secret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("resend-secret-0123456789abcdef!!"))
	ep, _ := e.create(webhook.CreateInput{Source: "resend", Secret: secret})
	body := []byte(`{"type":"email.bounced","created_at":"2026-01-01T00:00:00Z","data":{"email_id":"re_1","to":["r@example.com"],"bounce":{"type":"Permanent"}}}`)
	_, err := e.svc.Deliver(e.ctx, "resend", ep.ID, signStandard(t, secret, "webhook", "msg_1", e.now, body), body)
	requireCode(t, err, apperr.Unauthorized) // svix-* headers are what Resend sends
	tampered := append([]byte(nil), body...)
	tampered[10] = 'X'
	_, err = e.svc.Deliver(e.ctx, "resend", ep.ID, signStandard(t, secret, "svix", "msg_1", e.now, body), tampered)
	requireCode(t, err, apperr.Unauthorized)
	res, err := e.svc.Deliver(e.ctx, "resend", ep.ID, signStandard(t, secret, "svix", "msg_1", e.now, body), body)
	require.NoError(t, err)
	require.Equal(t, 1, res.Suppressed)
	require.Equal(t, "hard_bounce", e.suppressed("r@example.com"))
	res, err = e.svc.Deliver(e.ctx, "resend", ep.ID, signStandard(t, secret, "svix", "msg_1", e.now, body), body)
	require.NoError(t, err)
	require.Equal(t, 1, res.Replayed)
}

// TestResendTransientBounce: Resend reports SES's bounce types in data.bounce.type;
// a Transient or Undetermined bounce is soft (counted, nothing suppressed), only a
// Permanent one, or one without a type, is hard.
func TestResendTransientBounce(t *testing.T) {
	t.Parallel()
	e := setup(t, webhook.Options{SoftBounceLimit: 3, SoftBounceWindow: time.Hour})
	secret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("resend-secret-0123456789abcdef!!"))
	ep, _ := e.create(webhook.CreateInput{Source: "resend", Secret: secret})
	deliver := func(id, to, bounce string) {
		body := []byte(`{"type":"email.bounced","created_at":"2026-01-01T00:00:00Z","data":{"email_id":"re_` + id +
			`","to":["` + to + `"]` + bounce + `}}`)
		_, err := e.svc.Deliver(e.ctx, "resend", ep.ID, signStandard(t, secret, "svix", id, e.now, body), body)
		require.NoError(t, err)
	}
	deliver("t1", "transient@example.com", `,"bounce":{"type":"Transient","subType":"MailboxFull","message":"full"}`)
	deliver("t2", "lower@example.com", `,"bounce":{"type":"transient"}`)
	deliver("t3", "undetermined@example.com", `,"bounce":{"type":"Undetermined","subType":"Undetermined"}`)
	for _, addr := range []string{"transient@example.com", "lower@example.com", "undetermined@example.com"} {
		require.Empty(t, e.suppressed(addr), "%s: a transient bounce is soft", addr)
	}
	require.Equal(t, 3, e.count("soft_bounces"))

	deliver("p1", "permanent@example.com", `,"bounce":{"type":"Permanent","subType":"General"}`)
	require.Equal(t, "hard_bounce", e.suppressed("permanent@example.com"))
	deliver("p2", "untyped@example.com", ``)
	require.Equal(t, "hard_bounce", e.suppressed("untyped@example.com"), "email.bounced without a type is a permanent rejection")
}

func mailgunBody(key, token string, ts time.Time, event string) []byte {
	m := hmac.New(sha256.New, []byte(key))
	fmt.Fprintf(m, "%d%s", ts.Unix(), token)
	return fmt.Appendf(nil, `{"signature":{"timestamp":"%d","token":"%s","signature":"%s"},"event-data":%s}`,
		ts.Unix(), token, hex.EncodeToString(m.Sum(nil)), event)
}

func TestMailgunWebhook(t *testing.T) {
	t.Parallel()
	e := setup(t, webhook.Options{})
	key := "key-0123456789abcdef0123456789abcdef"
	ep, _ := e.create(webhook.CreateInput{Source: "mailgun", Secret: key})
	event := `{"event":"failed","severity":"permanent","recipient":"m@example.com","user-variables":{"job_id":"job-1"}}`
	_, err := e.svc.Deliver(e.ctx, "mailgun", ep.ID, http.Header{}, mailgunBody("wrong-key-0123456789abcdef", "tok1", e.now, event))
	requireCode(t, err, apperr.Unauthorized)
	_, err = e.svc.Deliver(e.ctx, "mailgun", ep.ID, http.Header{}, mailgunBody(key, "tok1", e.now.Add(-10*time.Minute), event))
	requireCode(t, err, apperr.Unauthorized)
	good := mailgunBody(key, "tok1", e.now, event)
	_, err = e.svc.Deliver(e.ctx, "mailgun", ep.ID, http.Header{}, []byte(strings.Replace(string(good), `"token":"tok1"`, `"token":"tok9"`, 1)))
	requireCode(t, err, apperr.Unauthorized)
	_, err = e.svc.Deliver(e.ctx, "mailgun", ep.ID, http.Header{}, []byte(`{"event-data":`+event+`}`))
	requireCode(t, err, apperr.Unauthorized)
	tampered := []byte(string(good[:len(good)-len(event)-1]) + `{"event":"failed","severity":"permanent","recipient":"x@example.com"}}`)
	_, err = e.svc.Deliver(e.ctx, "mailgun", ep.ID, http.Header{}, tampered)
	require.NoError(t, err, "Mailgun signs only timestamp+token; the replay gate below is what stops reuse")
	require.Equal(t, "hard_bounce", e.suppressed("x@example.com"))
	// The same token again, now with another recipient: replayed, nothing changes.
	res, err := e.svc.Deliver(e.ctx, "mailgun", ep.ID, http.Header{}, good)
	require.NoError(t, err)
	require.Equal(t, 1, res.Replayed)
	require.Empty(t, e.suppressed("m@example.com"))
	feedback := e.send("m@example.com", "job-1", "mg-1")
	res, err = e.svc.Deliver(e.ctx, "mailgun", ep.ID, http.Header{}, mailgunBody(key, "tok2", e.now, event))
	require.NoError(t, err)
	require.Equal(t, 1, res.Suppressed)
	require.Equal(t, "hard_bounce", feedback(), "correlated by the job_id user variable")
	require.Equal(t, "hard_bounce", e.suppressed("m@example.com"))
}

func TestSendGridWebhook(t *testing.T) {
	t.Parallel()
	e := setup(t, webhook.Options{})
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	require.NoError(t, err)
	ep, _ := e.create(webhook.CreateInput{Source: "sendgrid", Secret: base64.StdEncoding.EncodeToString(der)})
	sign := func(k *ecdsa.PrivateKey, ts time.Time, body []byte) http.Header {
		tsStr := strconv.FormatInt(ts.Unix(), 10)
		sum := sha256.Sum256(append([]byte(tsStr), body...))
		sig, err := ecdsa.SignASN1(rand.Reader, k, sum[:])
		require.NoError(t, err)
		h := http.Header{}
		h.Set("X-Twilio-Email-Event-Webhook-Signature", base64.StdEncoding.EncodeToString(sig))
		h.Set("X-Twilio-Email-Event-Webhook-Timestamp", tsStr)
		return h
	}
	feedback := e.send("g1@example.com", "job-g1", "m1")
	body := []byte(`[{"email":"g1@example.com","event":"spamreport","sg_event_id":"e1","sg_message_id":"m1.filter0001.16648.5515E0B88.0"},
		{"email":"g2@example.com","event":"bounce","type":"bounce","sg_event_id":"e2"},
		{"email":"g3@example.com","event":"bounce","type":"blocked","sg_event_id":"e3"},
		{"email":"g4@example.com","event":"delivered","sg_event_id":"e4"},
		{"email":"g5@example.com","event":"dropped","reason":"Unsubscribed Address","sg_event_id":"e5"}]`)
	otherKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	_, err = e.svc.Deliver(e.ctx, "sendgrid", ep.ID, sign(otherKey, e.now, body), body)
	requireCode(t, err, apperr.Unauthorized)
	_, err = e.svc.Deliver(e.ctx, "sendgrid", ep.ID, sign(priv, e.now, body), append(body, ' '))
	requireCode(t, err, apperr.Unauthorized)
	_, err = e.svc.Deliver(e.ctx, "sendgrid", ep.ID, sign(priv, e.now.Add(-time.Hour), body), body)
	requireCode(t, err, apperr.Unauthorized)
	require.Zero(t, e.count("suppressions"))

	res, err := e.svc.Deliver(e.ctx, "sendgrid", ep.ID, sign(priv, e.now, body), body)
	require.NoError(t, err)
	require.Equal(t, webhook.Result{Events: 5, Applied: 4, Suppressed: 3}, res)
	require.Equal(t, "unsubscribe", e.suppressed("g5@example.com"), "a drop mirrors SendGrid's own suppression")
	require.Equal(t, "complaint", e.suppressed("g1@example.com"))
	require.Equal(t, "complaint", feedback(), "correlated by provider message id")
	require.Equal(t, "hard_bounce", e.suppressed("g2@example.com"))
	require.Empty(t, e.suppressed("g3@example.com"), "a block is a soft bounce")
	res, err = e.svc.Deliver(e.ctx, "sendgrid", ep.ID, sign(priv, e.now, body), body)
	require.NoError(t, err)
	require.Equal(t, 4, res.Replayed)
}

func TestPostmarkWebhook(t *testing.T) {
	t.Parallel()
	e := setup(t, webhook.Options{})
	ep, creds := e.create(webhook.CreateInput{Source: "postmark"})
	require.NotEmpty(t, creds.Username)
	require.NotEmpty(t, creds.Password)
	auth := func(user, pass string) http.Header {
		h := http.Header{}
		h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
		return h
	}
	body := []byte(`{"RecordType":"Bounce","ID":4323372036854775807,"Type":"HardBounce","Email":"p@example.com","MessageID":"pm-1"}`)
	_, err := e.svc.Deliver(e.ctx, "postmark", ep.ID, auth(creds.Username, "wrong"), body)
	requireCode(t, err, apperr.Unauthorized)
	_, err = e.svc.Deliver(e.ctx, "postmark", ep.ID, http.Header{}, body)
	requireCode(t, err, apperr.Unauthorized)
	res, err := e.svc.Deliver(e.ctx, "postmark", ep.ID, auth(creds.Username, creds.Password), body)
	require.NoError(t, err)
	require.Equal(t, 1, res.Suppressed)
	require.Equal(t, "hard_bounce", e.suppressed("p@example.com"))
	res, err = e.svc.Deliver(e.ctx, "postmark", ep.ID, auth(creds.Username, creds.Password), body)
	require.NoError(t, err)
	require.Equal(t, 1, res.Replayed)

	change := []byte(`{"RecordType":"SubscriptionChange","Recipient":"u@example.com","ChangedAt":"2026-01-01T00:00:00Z","SuppressSending":true,"SuppressionReason":"ManualSuppression","MessageID":"pm-2"}`)
	_, err = e.svc.Deliver(e.ctx, "postmark", ep.ID, auth(creds.Username, creds.Password), change)
	require.NoError(t, err)
	require.Equal(t, "unsubscribe", e.suppressed("u@example.com"))
}

// TestConcurrentReplay delivers the same event from many goroutines at once: the
// primary key on webhook_events lets exactly one apply it.
func TestConcurrentReplay(t *testing.T) {
	t.Parallel()
	e := setup(t, webhook.Options{SoftBounceLimit: 2, SoftBounceWindow: time.Hour})
	ep, creds := e.create(webhook.CreateInput{Source: "standard"})
	body := []byte(`{"type":"subscriber.bounced","data":{"email":"c@example.com","bounce_type":"soft"}}`)
	h := signStandard(t, creds.Secret, "webhook", "same", e.now, body)
	const n = 8
	results := make(chan webhook.Result, n)
	for range n {
		go func() {
			res, err := e.svc.Deliver(e.ctx, "standard", ep.ID, h, body)
			if err != nil {
				t.Error(err)
			}
			results <- res
		}()
	}
	applied := 0
	for range n {
		applied += (<-results).Applied
	}
	require.Equal(t, 1, applied)
	require.Equal(t, 1, e.count("soft_bounces"), "a replay is not counted as a second soft bounce")
	require.Empty(t, e.suppressed("c@example.com"))
}
