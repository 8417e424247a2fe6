package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce"
	"github.com/sendonce/sendonce/api"
)

// TestCrossTenant walks every tenant route of openapi.yaml with account B's key and
// account A's ids: each must answer 404 (or, for a listing, an empty page), and A's
// data must be exactly as before. A route added to the spec without a row here fails.
func TestCrossTenant(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a := e.keyA
	res := e.do(a, "POST", "/v1/subscribers", map[string]any{"email": "a1@example.com", "status": "confirmed"})
	require.Equal(t, http.StatusCreated, res.Status)
	sub := decodeAs[api.Subscriber](t, res)
	res = e.do(a, "POST", "/v1/lists", map[string]any{"name": "a list"})
	require.Equal(t, http.StatusCreated, res.Status)
	list := decodeAs[api.List](t, res)
	res = e.do(a, "POST", "/v1/lists/"+itoa(list.Id)+"/members", map[string]any{"subscriber_ids": []int64{sub.Id}})
	require.Equal(t, http.StatusOK, res.Status)
	res = e.do(a, "POST", "/v1/suppressions", map[string]any{"email": "gone@example.com"})
	require.Equal(t, http.StatusCreated, res.Status)
	res = e.do(a, "POST", "/v1/campaigns", map[string]any{"name": "c", "subject": "Hi {{.Name}}",
		"from_email": "news@example.com", "text_template": "Hello", "list_ids": []int64{list.Id}})
	require.Equal(t, http.StatusCreated, res.Status)
	camp := decodeAs[api.Campaign](t, res)
	res = e.do(a, "POST", "/v1/templates", map[string]any{"name": "receipt", "subject": "Receipt {{.Attributes.order}}",
		"text": "Thanks for {{.Attributes.order}}", "sample_data": map[string]any{"order": "A-1"}})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	tpl := decodeAs[api.Template](t, res)
	res = e.do(a, "POST", "/v1/layouts", map[string]any{"name": "brand", "html": "<div>{{content}}</div>", "default": true})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	lay := decodeAs[api.Layout](t, res)
	res = e.do(a, "POST", "/v1/templates", map[string]any{"name": "md", "subject": "News",
		"content_type": "markdown", "markdown": "# Hi {{.Name}}", "layout_id": lay.Id})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	res = e.do(a, "POST", "/v1/messages", map[string]any{"to": "a1@example.com", "from": "shop@example.com",
		"template_id": tpl.Id, "tags": []string{"receipt"}}, "Idempotency-Key", "order-1")
	require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
	msg := decodeAs[api.Message](t, res)
	res = e.do(a, "POST", "/v1/segments", map[string]any{"name": "pro", "match": `$.plan == "pro"`, "list_ids": []int64{list.Id}})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	seg := decodeAs[api.Segment](t, res)
	res = e.do(a, "POST", "/v1/webhook-endpoints", map[string]any{"source": "standard", "name": "a hook"})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	var hook struct {
		ID int64 `json:"id"`
	}
	require.NoError(t, json.Unmarshal(res.Body, &hook))
	res = e.do(a, "POST", "/v1/event-endpoints", map[string]any{"url": "https://example.com/hook"})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	var eventEndpoint struct {
		ID int64 `json:"id"`
	}
	require.NoError(t, json.Unmarshal(res.Body, &eventEndpoint))
	res = e.do(a, "POST", "/v1/senders", map[string]any{"name": "a sender", "type": "postmark",
		"credentials": map[string]any{"server_token": "token-of-account-a"}})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	var snd struct {
		ID int64 `json:"id"`
	}
	require.NoError(t, json.Unmarshal(res.Body, &snd))
	res = e.do(a, "POST", "/v1/sender-pools", map[string]any{"name": "a pool", "senders": []int64{snd.ID}})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	pl := decodeAs[api.SenderPool](t, res)

	res = e.do(a, "PUT", "/v1/account/sso", map[string]any{"issuer_url": "https://login.example.com", "client_id": "a",
		"client_secret": "a-secret", "allowed_domains": []string{"example.com"}, "default_role": "viewer", "enabled": false})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))

	seqBody := map[string]any{"name": "welcome", "trigger": map[string]any{"type": "event", "event": "signed_up"},
		"steps": []map[string]any{{"type": "send", "template_id": tpl.Id, "from_email": "hello@example.com"}}}
	res = e.do(a, "POST", "/v1/sequences", seqBody)
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	seq := decodeAs[api.Sequence](t, res)
	res = e.do(a, "POST", "/v1/sequences/"+itoa(seq.Id)+"/activate", nil)
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	res = e.do(a, "POST", "/v1/track", map[string]any{"event_id": "e-1", "name": "signed_up", "email": "a1@example.com"})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	require.Contains(t, string(res.Body), `"enrolled":1`)

	res = e.do(a, "GET", "/v1/api-keys", nil)
	require.Equal(t, http.StatusOK, res.Status)
	var keys api.APIKeyPage
	require.NoError(t, json.Unmarshal(res.Body, &keys))
	keyID := keys.Data[0].Id
	res = e.do(a, "POST", "/v1/invitations", map[string]any{"email": "grace@example.com", "role": "editor"})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	inv := decodeAs[api.Invitation](t, res)
	res = e.do(a, "POST", "/v1/domains/news.example.com/dkim-keys", map[string]any{"selector": "a1", "algorithm": "ed25519"})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	dk := decodeAs[api.DkimKey](t, res)

	res = e.do(a, "PUT", "/v1/bounce-mailbox", map[string]any{"host": "imap.example.com", "port": 993,
		"username": "bounces", "password": "a-password", "enabled": true})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))

	res = e.do(a, "POST", "/v1/media?name=logo.png", pngBytes(t, 40, 20), "Content-Type", "image/png")
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	img := decodeAs[api.Media](t, res)

	snapshot := func() []string {
		var out []string
		for _, p := range []string{"/v1/subscribers/" + itoa(sub.Id), "/v1/lists/" + itoa(list.Id),
			"/v1/campaigns/" + itoa(camp.Id), "/v1/campaigns/" + itoa(camp.Id) + "/stats",
			"/v1/campaigns/" + itoa(camp.Id) + "/clicks",
			"/v1/suppressions", "/v1/subscribers", "/v1/lists", "/v1/campaigns",
			"/v1/webhook-endpoints", "/v1/webhook-endpoints/" + itoa(hook.ID),
			"/v1/templates", "/v1/templates/" + itoa(tpl.Id), "/v1/media", "/v1/media/" + itoa(img.Id),
			"/v1/templates", "/v1/templates/" + itoa(tpl.Id), "/v1/layouts", "/v1/layouts/" + itoa(lay.Id),
			"/v1/messages", "/v1/messages/" + itoa(msg.Id),
			"/v1/event-endpoints", "/v1/event-endpoints/" + itoa(eventEndpoint.ID),
			"/v1/event-endpoints/" + itoa(eventEndpoint.ID) + "/deliveries", "/v1/events",
			"/v1/segments", "/v1/segments/" + itoa(seg.Id),
			"/v1/senders", "/v1/senders/" + itoa(snd.ID), "/v1/api-keys",
			"/v1/sender-pools", "/v1/sender-pools/" + itoa(pl.Id),
			"/v1/sequences", "/v1/sequences/" + itoa(seq.Id), "/v1/sequences/" + itoa(seq.Id) + "/enrollments",
			"/v1/sequences/" + itoa(seq.Id) + "/stats", "/v1/account/sso", "/v1/domains/news.example.com/dkim-keys", "/v1/bounce-mailbox"} {
			r := e.do(a, "GET", p, nil)
			require.Equal(t, http.StatusOK, r.Status, p)
			out = append(out, string(r.Body))
		}
		return out
	}
	// Events become readable once no older transaction is still running anywhere on
	// the cluster (other tests' included), so wait for the setup's one event before
	// taking the snapshot the walk must leave unchanged.
	require.Eventually(t, func() bool {
		r := e.do(a, "GET", "/v1/events", nil)
		return r.Status == http.StatusOK && strings.Contains(string(r.Body), `"suppression.created"`)
	}, 30*time.Second, 20*time.Millisecond)
	before := snapshot()

	type call struct {
		body   any
		query  string
		expect int // 0: 404
	}
	campaignBody := map[string]any{"name": "x", "subject": "x", "from_email": "x@example.com", "list_ids": []int64{list.Id}}
	calls := map[string]call{
		"listSubscribers":   {query: "?list_id=" + itoa(list.Id), expect: http.StatusOK},
		"createSubscriber":  {body: map[string]any{"email": "a1@example.com"}, expect: http.StatusCreated},
		"importSubscribers": {body: []map[string]any{{"email": "a1@example.com"}}, query: "?list_id=" + itoa(list.Id)},
		"getSubscriber":     {},
		"countSubscribers":  {query: "?list_id=" + itoa(list.Id), expect: http.StatusOK},
		"getSuppression":    {},
		"updateSubscriber":  {body: map[string]any{"name": "hijacked"}},
		"deleteSubscriber":  {},
		"confirmSubscriber": {},
		"listLists":         {expect: http.StatusOK},
		"createList":        {body: map[string]any{"name": "a list"}, expect: http.StatusCreated},
		"getList":           {},
		"updateList":        {body: map[string]any{"name": "hijacked"}},
		"deleteList":        {},
		"addListMembers":    {body: map[string]any{"subscriber_ids": []int64{sub.Id}}},
		"removeListMembers": {body: map[string]any{"subscriber_ids": []int64{sub.Id}}},
		"listSuppressions":  {expect: http.StatusOK},
		"addSuppression":    {body: map[string]any{"email": "gone@example.com"}, expect: http.StatusCreated},
		"removeSuppression": {},
		"listCampaigns":     {expect: http.StatusOK},
		"createCampaign":    {body: campaignBody, expect: http.StatusUnprocessableEntity},
		"getCampaign":       {},
		"updateCampaign":    {body: map[string]any{"name": "hijacked"}},
		"deleteCampaign":    {},
		"approveCampaign":   {body: map[string]any{}},
		"unapproveCampaign": {},
		"pauseCampaign":     {},
		"resumeCampaign":    {},
		"cancelCampaign":    {},
		"testCampaign":      {body: map[string]any{"emails": []string{"x@example.com"}}},
		"getCampaignStats":  {},
		// Reports and acting on them: B's analytics are B's own days.
		"getCampaignReport":   {},
		"retryFailedCampaign": {},
		"duplicateCampaign":   {},
		// A/B tests: B neither reads, sets, clears nor decides A's.
		"getCampaignABTest": {},
		"setCampaignABTest": {body: map[string]any{"mode": "split",
			"variants": []map[string]any{{"subject": "x"}, {"subject": "y"}}}},
		"deleteCampaignABTest": {},
		"chooseCampaignWinner": {body: map[string]any{"variant": "A"}},
		"getAnalytics":         {expect: http.StatusOK},
		"listCampaignSends":    {},
		// The campaign page's chart and events (sends by address: TestCampaignSendsByEmail).
		"getCampaignTimeline": {},
		"listCampaignEvents":  {},
		"getAccount":          {expect: http.StatusOK},
		"getCampaignClicks":   {},
		"listSubscriberLists": {},
		// A person's activity, export and erasure; the streamed exports, whose
		// 200 carries only B's rows (checked below: none of A's addresses).
		"getSubscriberActivity":    {},
		"exportSubscriber":         {},
		"eraseSubscriber":          {},
		"exportSubscribers":        {expect: http.StatusOK},
		"exportCampaignRecipients": {},
		"exportSuppressions":       {expect: http.StatusOK},
		"exportMessages":           {expect: http.StatusOK},
		"exportEvents":             {query: "?format=ndjson", expect: http.StatusOK},
		// Layouts: B neither reads, changes nor deletes A's (B's own is B's).
		"listLayouts":  {expect: http.StatusOK},
		"createLayout": {body: map[string]any{"name": "brand", "html": "<p>{{content}}</p>", "default": true}, expect: http.StatusCreated},
		"getLayout":    {},
		"updateLayout": {body: map[string]any{"html": "<b>{{content}}</b>"}},
		"deleteLayout": {},
		// Templates: B neither reads, renders, changes nor uses A's.
		"listMedia":      {expect: http.StatusOK},
		"uploadMedia":    {body: pngBytes(t, 40, 20), expect: http.StatusCreated},
		"getMedia":       {},
		"deleteMedia":    {},
		"listTemplates":  {expect: http.StatusOK},
		"lintContent":    {body: map[string]any{"subject": "x", "html": "<p>x</p>"}, expect: http.StatusOK},
		"createTemplate": {body: map[string]any{"name": "receipt", "subject": "x", "text": "x"}, expect: http.StatusCreated},
		"getTemplate":    {},
		"updateTemplate": {body: map[string]any{"subject": "hijacked"}},
		"deleteTemplate": {},
		"renderTemplate": {body: map[string]any{"data": map[string]any{"order": "B"}}},
		// B cannot copy A's template.
		"duplicateTemplate": {},
		// An unsaved template names no resource: B previews its own text.
		"previewTemplate": {body: map[string]any{"subject": "x", "text": "x"}, expect: http.StatusOK},
		// Messages: B's key is B's own (the same key makes B a new message), and
		// B cannot send with A's template or read A's messages.
		"listMessages": {query: "?to=a1@example.com&tag=receipt", expect: http.StatusOK},
		"getMessage":   {},
		"sendMessage": {body: map[string]any{"to": "a1@example.com", "from": "shop@example.com", "template_id": tpl.Id},
			expect: http.StatusUnprocessableEntity},
		"sendMessageBatch": {body: map[string]any{"messages": []map[string]any{{"idempotency_key": "order-1",
			"message": map[string]any{"to": "a1@example.com", "from": "shop@example.com", "subject": "s", "text": "t"}}}},
			expect: http.StatusOK},
		"updateAccount": {body: map[string]any{"unsubscribe_scope": "account"}, expect: http.StatusOK},
		// Domain checks: B cannot name A's sender (nothing is looked up).
		"checkDomain": {body: map[string]any{"domain": "example.com", "sender_id": snd.ID}, expect: http.StatusUnprocessableEntity},
		// DKIM keys: B lists none of A's keys of a domain, cannot activate or delete
		// them, and its own key of the same domain and selector is its own.
		"listDkimKeys":    {expect: http.StatusOK},
		"createDkimKey":   {body: map[string]any{"selector": "a1"}, expect: http.StatusCreated},
		"activateDkimKey": {},
		"deleteDkimKey":   {},
		// Segments: B cannot read, replace or delete A's, nor filter on A's lists.
		"listSegments":   {expect: http.StatusOK},
		"createSegment":  {body: map[string]any{"name": "pro", "list_ids": []int64{list.Id}}, expect: http.StatusUnprocessableEntity},
		"getSegment":     {},
		"updateSegment":  {body: map[string]any{"name": "hijacked", "match": "$.x == 1"}},
		"deleteSegment":  {},
		"previewSegment": {body: map[string]any{"list_ids": []int64{list.Id}}, expect: http.StatusUnprocessableEntity},
		// Nor page or count its members.
		"listSegmentSubscribers":  {},
		"countSegmentSubscribers": {},
		// Webhook endpoints are tenant resources like the rest.
		"listWebhookEndpoints":  {expect: http.StatusOK},
		"createWebhookEndpoint": {body: map[string]any{"source": "standard", "name": "a hook"}, expect: http.StatusCreated},
		"getWebhookEndpoint":    {},
		"deleteWebhookEndpoint": {},
		"rotateWebhookEndpoint": {body: map[string]any{}},
		// Events out: B sees none of A's events or endpoints. The stream cannot end
		// in this walk, so its row checks only that a bad filter is refused before
		// it starts; TestEventStreamTenant walks the stream itself.
		"listEvents":                  {expect: http.StatusOK},
		"streamEvents":                {query: "?type=no.such", expect: http.StatusUnprocessableEntity},
		"createEventStreamToken":      {expect: http.StatusCreated},
		"listEventEndpoints":          {expect: http.StatusOK},
		"createEventEndpoint":         {body: map[string]any{"url": "https://example.com/b"}, expect: http.StatusCreated},
		"getEventEndpoint":            {},
		"updateEventEndpoint":         {body: map[string]any{"description": "hijacked"}},
		"deleteEventEndpoint":         {},
		"rotateEventEndpoint":         {body: map[string]any{}},
		"pingEventEndpoint":           {},
		"redeliverEventEndpoint":      {body: map[string]any{"since": "2020-01-01T00:00:00Z"}},
		"listEventEndpointDeliveries": {},
		// Keys: B lists only its own (checked below) and cannot revoke A's. Sessions
		// need a cookie or a login token, never a key; there is no dev inbox here
		// (TestDevInboxIsolation walks one).
		"listAPIKeys": {expect: http.StatusOK},
		// A's entries about A's subscriber are none of B's.
		"listAuditLog":    {query: "?target_type=subscriber&target_id=" + itoa(sub.Id), expect: http.StatusOK},
		"createAPIKey":    {body: map[string]any{"name": "b key"}, expect: http.StatusCreated},
		"revokeAPIKey":    {},
		"createLoginLink": {expect: http.StatusCreated},
		"createSession":   {body: map[string]any{"login_token": "sol_x"}, expect: http.StatusUnauthorized},
		"getSession":      {expect: http.StatusUnauthorized},
		"deleteSession":   {expect: http.StatusUnauthorized},
		"listDevInbox":    {},
		"getDevInboxHTML": {},
		// People: B lists only its own members and cannot change, remove or
		// revoke A's (TestMembersOfAnotherTenant404 aims at real members); the
		// sign-in routes know no account; a key has no "me".
		"listMembers":           {expect: http.StatusOK},
		"updateMember":          {body: map[string]any{"role": "viewer"}},
		"removeMember":          {},
		"createInvitation":      {body: map[string]any{"email": "b1@example.com", "role": "viewer"}, expect: http.StatusCreated},
		"revokeInvitation":      {},
		"getAccountSecurity":    {expect: http.StatusOK},
		"updateAccountSecurity": {body: map[string]any{"require_two_factor": false}, expect: http.StatusOK},
		// Single sign-on: B's settings are B's; B has none (A's are set below).
		"getAccountSSO":    {},
		"deleteAccountSSO": {},
		"setAccountSSO": {body: map[string]any{"issuer_url": "https://login.example.com", "client_id": "b",
			"client_secret": "b-secret", "allowed_domains": []string{"b.example"}, "default_role": "viewer",
			"enabled": false}, expect: http.StatusOK},
		"acceptInvitation":      {body: map[string]any{"token": "soi_x"}, expect: http.StatusUnauthorized},
		"signInWithPassword":    {body: map[string]any{"email": "a1@example.com", "password": "x"}, expect: http.StatusUnauthorized},
		"signInWithEmailLink":   {body: map[string]any{"token": "sou_x"}, expect: http.StatusUnauthorized},
		"signInSecondFactor":    {body: map[string]any{"challenge": "soc_x", "code": "123456"}, expect: http.StatusUnauthorized},
		"requestSignInLink":     {body: map[string]any{"email": "a1@example.com"}, expect: http.StatusAccepted},
		"requestPasswordReset":  {body: map[string]any{"email": "a1@example.com"}, expect: http.StatusAccepted},
		"completePasswordReset": {body: map[string]any{"token": "sor_x", "password": "long enough password"}, expect: http.StatusUnauthorized},
		"listMyAccounts":        {expect: http.StatusForbidden},
		"switchAccount":         {body: map[string]any{"account_id": 1}, expect: http.StatusForbidden},
		"listMySessions":        {expect: http.StatusForbidden},
		"endMySession":          {expect: http.StatusForbidden},
		"startTwoFactor":        {expect: http.StatusForbidden},
		"confirmTwoFactor":      {body: map[string]any{"code": "123456"}, expect: http.StatusForbidden},
		"removeTwoFactor":       {body: map[string]any{"code": "123456"}, expect: http.StatusForbidden},
		"changeMyPassword":      {body: map[string]any{"current_password": "x", "password": "a long enough password"}, expect: http.StatusForbidden},
		// Senders: B can neither read, change, verify nor delete A's.
		"listSenders":  {expect: http.StatusOK},
		"createSender": {body: map[string]any{"name": "b sender", "type": "resend", "credentials": map[string]any{"api_key": "re_b"}}, expect: http.StatusCreated},
		"getSender":    {},
		"updateSender": {body: map[string]any{"name": "hijacked", "credentials": map[string]any{"server_token": "b-token"}}},
		"deleteSender": {},
		"verifySender": {},
		// Sender pools: B neither reads nor changes A's, nor builds one of A's sender
		// (422 naming /senders/0), nor names A's pool in a campaign (422 /pool_id).
		"listSenderPools":  {expect: http.StatusOK},
		"createSenderPool": {body: map[string]any{"name": "b pool", "senders": []int64{snd.ID}}, expect: http.StatusUnprocessableEntity},
		"getSenderPool":    {},
		"updateSenderPool": {body: map[string]any{"name": "hijacked"}},
		"deleteSenderPool": {},
		// The bounce mailbox is the key's own account's: B reads and deletes none
		// (A's stays as it was), and sets its own.
		"getBounceMailbox":    {},
		"deleteBounceMailbox": {},
		"putBounceMailbox": {body: map[string]any{"host": "imap.b.example", "port": 993, "username": "b",
			"password": "b-password", "enabled": true}, expect: http.StatusOK},
		// Sequences: B can neither read, change, run nor enroll into A's, nor
		// build one from A's template; B's /track with A's event id and address is
		// B's own event (B has no such subscriber: it triggers nothing).
		"listSequences":           {expect: http.StatusOK},
		"createSequence":          {body: seqBody, expect: http.StatusUnprocessableEntity},
		"getSequence":             {},
		"updateSequence":          {body: map[string]any{"name": "hijacked", "trigger": map[string]any{"type": "manual"}, "steps": []map[string]any{{"type": "wait", "duration": "1h"}}}},
		"deleteSequence":          {},
		"activateSequence":        {},
		"pauseSequence":           {},
		"resumeSequence":          {},
		"archiveSequence":         {},
		"enrollSequence":          {body: map[string]any{"email": "a1@example.com"}},
		"listSequenceEnrollments": {query: "?email=a1@example.com"},
		"getSequenceStats":        {},
		"trackEvent":              {body: map[string]any{"event_id": "e-1", "name": "signed_up", "email": "a1@example.com"}, expect: http.StatusOK},
		// Deliveries carry no API key: the endpoint's signature authenticates, and an
		// unsigned post to A's endpoint is refused whoever sends it.
		"deliverWebhook": {body: map[string]any{"type": "subscriber.unsubscribed", "data": map[string]any{"email": "a1@example.com"}}, expect: http.StatusUnauthorized},
	}
	doc, err := openapi3.NewLoader().LoadFromData(sendonce.OpenAPI)
	require.NoError(t, err)
	// Listings first (they must be empty), then reads and changes, then B's own
	// creations, so what B creates never shows in a listing of this walk.
	type op struct{ method, path, id string }
	var ops []op
	for path, item := range doc.Paths.Map() {
		if !strings.HasPrefix(path, "/v1/") {
			continue
		}
		for method, o := range item.Operations() {
			ops = append(ops, op{method, path, o.OperationID})
		}
	}
	rank := func(o op) int {
		switch {
		case strings.HasPrefix(o.id, "list"):
			return 0
		case strings.HasPrefix(o.id, "create"), o.id == "addSuppression", o.id == "importSubscribers", o.id == "uploadMedia":
			return 2
		}
		return 1
	}
	sort.Slice(ops, func(i, j int) bool {
		if rank(ops[i]) != rank(ops[j]) {
			return rank(ops[i]) < rank(ops[j])
		}
		return ops[i].id < ops[j].id
	})
	for _, o := range ops {
		method, path := o.method, o.path
		c, ok := calls[o.id]
		require.True(t, ok, "operation %s (%s %s) has no cross-tenant row", o.id, method, path)
		url := path
		switch {
		case strings.HasPrefix(path, "/v1/subscribers/"):
			url = strings.ReplaceAll(url, "{id}", itoa(sub.Id))
		case strings.HasPrefix(path, "/v1/lists/"):
			url = strings.ReplaceAll(url, "{id}", itoa(list.Id))
		case strings.HasPrefix(path, "/v1/campaigns/"):
			url = strings.ReplaceAll(url, "{id}", itoa(camp.Id))
		case strings.HasPrefix(path, "/v1/messages/"):
			url = strings.ReplaceAll(url, "{id}", itoa(msg.Id))
		case strings.HasPrefix(path, "/v1/media/"):
			url = strings.ReplaceAll(url, "{id}", itoa(img.Id))
		case strings.HasPrefix(path, "/v1/layouts/"):
			url = strings.ReplaceAll(url, "{id}", itoa(lay.Id))
		case strings.HasPrefix(path, "/v1/templates/"):
			url = strings.ReplaceAll(url, "{id}", itoa(tpl.Id))
		case strings.HasPrefix(path, "/v1/segments/"):
			url = strings.ReplaceAll(url, "{id}", itoa(seg.Id))
		case strings.HasPrefix(path, "/v1/webhook-endpoints/"):
			url = strings.ReplaceAll(url, "{id}", itoa(hook.ID))
		case strings.HasPrefix(path, "/v1/event-endpoints/"):
			url = strings.ReplaceAll(url, "{id}", itoa(eventEndpoint.ID))
		case strings.HasPrefix(path, "/v1/sender-pools/"):
			url = strings.ReplaceAll(url, "{id}", itoa(pl.Id))
		case strings.HasPrefix(path, "/v1/senders/"):
			url = strings.ReplaceAll(url, "{id}", itoa(snd.ID))
		case strings.HasPrefix(path, "/v1/sequences/"):
			url = strings.ReplaceAll(url, "{id}", itoa(seq.Id))
		case strings.HasPrefix(path, "/v1/api-keys/"):
			url = strings.ReplaceAll(url, "{id}", itoa(keyID))
		case strings.HasPrefix(path, "/v1/dev/inbox/"):
			url = strings.ReplaceAll(url, "{id}", "1")
		case strings.HasPrefix(path, "/v1/invitations/"):
			url = strings.ReplaceAll(url, "{id}", itoa(inv.Id))
		case strings.HasPrefix(path, "/v1/members/"), strings.HasPrefix(path, "/v1/me/sessions/"):
			url = strings.ReplaceAll(url, "{id}", itoa(sub.Id)) // no member or session of B's has it
		case strings.HasPrefix(path, "/v1/domains/"):
			url = strings.NewReplacer("{domain}", "news.example.com", "{id}", itoa(dk.Id)).Replace(url)
		case strings.HasPrefix(path, "/v1/webhooks/"):
			url = strings.NewReplacer("{source}", "standard", "{endpoint_id}", itoa(hook.ID)).Replace(url)
		}
		url = strings.ReplaceAll(url, "{email}", "gone@example.com")
		var headers []string
		if o.id == "sendMessage" {
			headers = []string{"Idempotency-Key", "order-1"} // A's key, which B's own space does not know
		}
		if o.id == "uploadMedia" {
			headers = []string{"Content-Type", "image/png"}
		}
		res := e.do(e.keyB, method, url+c.query, c.body, headers...)
		want := c.expect
		if want == 0 {
			want = http.StatusNotFound
		}
		require.Equal(t, want, res.Status, "%s %s: %s", method, url, res.Body)
		if o.id == "listAPIKeys" { // B's own key is there; A's is not
			require.NotContains(t, string(res.Body), fmt.Sprintf(`"id":%d,`, keyID))
			continue
		}
		if want == http.StatusOK && strings.HasPrefix(o.id, "export") {
			require.NotContains(t, string(res.Body), "a1@example.com", "%s %s", method, url)
			require.NotContains(t, string(res.Body), "gone@example.com", "%s %s", method, url)
		}
		if o.id == "countSubscribers" { // A's list counts nothing of A's for B
			require.JSONEq(t, `{"count":0,"exact":true}`, string(res.Body))
			continue
		}
		if o.id == "listDkimKeys" {
			require.JSONEq(t, `{"data":[]}`, string(res.Body))
			continue
		}
		if o.id == "listMembers" {
			require.JSONEq(t, `{"members":[],"invitations":[]}`, string(res.Body))
			continue
		}
		if want == http.StatusOK && strings.HasPrefix(o.id, "list") {
			require.JSONEq(t, `{"data":[],"next_cursor":null}`, string(res.Body), "%s %s", method, url)
		}
	}

	// B's campaign cannot take its content from A's template.
	res = e.do(e.keyB, "POST", "/v1/campaigns", map[string]any{"name": "b", "from_email": "b@example.com", "template_id": tpl.Id})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, string(res.Body))
	require.Contains(t, string(res.Body), "/template_id")

	// Nor can B's list send its confirmations with A's template.
	res = e.do(e.keyB, "POST", "/v1/lists", map[string]any{"name": "b double", "optin": "double",
		"optin_from_email": "b@example.com", "optin_template_id": tpl.Id})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, string(res.Body))
	require.Contains(t, string(res.Body), "/optin_template_id")
	// The public routes are keyed by public id and signed tokens, not API keys:
	// TestSignupCrossTenant walks them.

	require.Equal(t, before, snapshot(), "account B changed account A's data")
}
