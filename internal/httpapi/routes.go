package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sendonce/sendonce/internal/sequence"
)

// routes is the whole API on one screen. Every route here is in openapi.yaml, and a
// test holds the two to the same list.
func (s *Server) routes() {
	r := s.router
	// GetHead answers HEAD on every GET route (RFC 9110 §9.1); net/http drops the body.
	r.Use(requestID, s.recoverer, s.observe, middleware.GetHead)
	r.NotFound(s.handle(notFound))
	r.MethodNotAllowed(s.handle(s.methodNotAllowed))

	r.Get("/healthz", s.handle(s.healthz))
	r.Get("/readyz", s.handle(s.readyz))
	if !s.opts.MetricsElsewhere { // else served on their own listener only
		r.Method(http.MethodGet, "/metrics", promhttp.HandlerFor(s.Registry, promhttp.HandlerOpts{}))
	}
	r.Get("/openapi.yaml", s.handle(s.openapi))
	r.Get("/docs", s.handle(s.apiReference))

	// Opt-outs. /u/{token} and provider deliveries carry no API key: the
	// token's HMAC or the provider's signature authenticates them.
	r.Get("/u/{token}", s.handle(s.unsubscribePage))
	r.Post("/u/{token}", s.handle(s.unsubscribePost))
	r.Post("/v1/webhooks/{source}/{endpoint_id}", s.handle(s.deliverWebhook))
	// Engagement: tracked links, the open pixel, the web view and the public
	// archive; the tokens' HMAC (or the account's random public id) names them.
	r.Get("/c/{token}", s.handle(s.followClick))
	r.Get("/o/{token}", s.handle(s.openPixel))
	r.Get("/v/{token}", s.handle(s.webView))
	r.Get("/archive/{account_public_id}", s.handle(s.archiveIndex))
	r.Get("/archive/{account_public_id}/{id}", s.handle(s.archivePage))
	r.Get("/media/{account_public_id}/{file}", s.handle(s.mediaFile))
	// Public sign-up and double opt-in: no API key. The form is named by the
	// account's random public id and may be posted from any web site (CORS without
	// credentials), rate-limited per client address and per account; the confirm
	// link's HMAC authenticates it.
	r.Route("/p/{account_public_id}", func(r chiRouter) {
		r.Use(publicCORS())
		r.Post("/subscribe", s.handle(s.publicSignup))
	})
	r.Get("/p/confirm/{token}", s.handle(s.confirmPage))
	r.Post("/p/confirm/{token}", s.handle(s.confirmPost))
	// The event stream authenticates itself (API key or stream token: EventSource
	// sends no headers) and runs outside the request-bounding middleware.
	r.With(s.cors()).Get(streamRoute, s.handle(s.streamEvents))

	// The dashboard: a page and its assets, same origin as the API it calls. It
	// signs in here (a login link or a key, exchanged for a session cookie).
	r.Get("/app", s.handle(s.dashboardPage))
	r.Get("/app/assets/{version}/{name}", s.handle(s.dashboardAsset))
	r.With(s.shed, s.bodyLimit, s.validateRequest).Post("/v1/session", s.handle(s.createSession))
	r.With(s.shed).Get("/v1/session", s.handle(s.getSession))
	r.With(s.shed).Delete("/v1/session", s.handle(s.deleteSession))
	// People sign in here (password, email link, second factor), accept
	// invitations and reset passwords; failures are limited per client address
	// and per email address (users.go).
	r.Group(func(r chiRouter) {
		r.Use(s.shed, s.bodyLimit, s.validateRequest)
		r.Post("/v1/session/password", s.handle(s.signInWithPassword))
		r.Post("/v1/session/email-link", s.handle(s.signInWithEmailLink))
		r.Post("/v1/session/second-factor", s.handle(s.signInSecondFactor))
		r.Post("/v1/sign-in-links", s.handle(s.requestSignInLink))
		r.Post("/v1/password-resets", s.handle(s.requestPasswordReset))
		r.Post("/v1/password-resets/complete", s.handle(s.completePasswordReset))
		r.Post("/v1/invitations/accept", s.handle(s.acceptInvitation))
	})
	// Single sign-on through an account's identity provider: browser navigations
	// (a redirect out, a redirect back), no key; failures are limited per client
	// address like other sign-ins (sso.go).
	r.With(s.shed).Get("/sso/start", s.handle(s.ssoStart))
	r.With(s.shed).Get("/sso/callback", s.handle(s.ssoCallback))

	// The operator API: accounts as tenants. The operator key is its one gate
	// (operatorOnly): no tenant key or session opens it, and it opens no tenant route.
	r.Route("/operator/v1", func(r chiRouter) {
		// In a group, so a method the path does not take is a 405 with Allow
		// before the gate, as on every other route.
		r.Group(func(r chiRouter) {
			r.Use(s.shed, s.operatorOnly, s.bodyLimit, s.validateRequest)
			r.Get("/accounts", s.handle(s.operatorListAccounts))
			r.Post("/accounts", s.handle(s.operatorCreateAccount))
			r.Get("/accounts/{id}", s.handle(s.operatorGetAccount))
			r.Delete("/accounts/{id}", s.handle(s.operatorDeleteAccount))
			r.Put("/accounts/{id}/quotas", s.handle(s.operatorSetQuotas))
			r.Post("/accounts/{id}/suspend", s.handle(s.operatorSuspendAccount))
			r.Post("/accounts/{id}/resume", s.handle(s.operatorResumeAccount))
		})
	})

	r.Route("/v1", func(r chiRouter) {
		// authorize enforces the route table (access.Routes: the permission each
		// route needs) before anything else of the route runs; it sits in each
		// group below, where the route is known. recordAudit, last before the
		// handler, gives every write its audit entry.
		r.Use(s.cors(), s.shed, s.authenticate)
		r.With(s.authorize, s.rateLimit).Get("/account", s.handle(s.getAccount))

		// Tenant API. Every route here is checked against openapi.yaml before
		// its handler runs, and POSTs honour Idempotency-Key.
		r.Group(func(r chiRouter) {
			r.Use(s.authorize, s.rateLimit, s.bodyLimit, s.validateRequest, s.idempotency, s.recordAudit)

			r.Patch("/account", s.handle(s.updateAccount))

			r.Get("/subscribers", s.handle(s.listSubscribers))
			r.With(s.unbounded).Get("/subscribers/export", s.handle(s.exportSubscribers))
			r.Post("/subscribers", s.handle(s.createSubscriber))
			r.With(s.unbounded).Post("/subscribers/import", s.handle(s.importSubscribers))
			r.Get("/subscribers/count", s.handle(s.countSubscribers))
			r.Get("/subscribers/{id}", s.handle(s.getSubscriber))
			r.Patch("/subscribers/{id}", s.handle(s.updateSubscriber))
			r.Delete("/subscribers/{id}", s.handle(s.deleteSubscriber))
			r.Post("/subscribers/{id}/confirm", s.handle(s.confirmSubscriber))
			r.Get("/subscribers/{id}/lists", s.handle(s.listSubscriberLists))
			r.Get("/subscribers/{id}/activity", s.handle(s.subscriberActivity))
			r.Get("/subscribers/{id}/export", s.handle(s.exportSubscriber))
			r.Post("/subscribers/{id}/erase", s.handle(s.eraseSubscriber))

			r.Get("/lists", s.handle(s.listLists))
			r.Post("/lists", s.handle(s.createList))
			r.Get("/lists/{id}", s.handle(s.getList))
			r.Patch("/lists/{id}", s.handle(s.updateList))
			r.Delete("/lists/{id}", s.handle(s.deleteList))
			r.Post("/lists/{id}/members", s.handle(s.addListMembers))
			r.Delete("/lists/{id}/members", s.handle(s.removeListMembers))

			r.Get("/segments", s.handle(s.listSegments))
			r.Post("/segments", s.handle(s.createSegment))
			r.Post("/segments/preview", s.handle(s.previewSegment))
			r.Get("/segments/{id}", s.handle(s.getSegment))
			r.Put("/segments/{id}", s.handle(s.updateSegment))
			r.Delete("/segments/{id}", s.handle(s.deleteSegment))
			r.Get("/segments/{id}/subscribers", s.handle(s.listSegmentSubscribers))
			r.Get("/segments/{id}/subscribers/count", s.handle(s.countSegmentSubscribers))

			r.Get("/suppressions", s.handle(s.listSuppressions))
			r.With(s.unbounded).Get("/suppressions/export", s.handle(s.exportSuppressions))
			r.Post("/suppressions", s.handle(s.addSuppression))
			r.Get("/suppressions/{email}", s.handle(s.getSuppression))
			r.Delete("/suppressions/{email}", s.handle(s.removeSuppression))

			r.Get("/media", s.handle(s.listMedia))
			r.Post("/media", s.handle(s.uploadMedia))
			r.Get("/media/{id}", s.handle(s.getMedia))
			r.Delete("/media/{id}", s.handle(s.deleteMedia))
			r.Get("/layouts", s.handle(s.listLayouts))
			r.Post("/layouts", s.handle(s.createLayout))
			r.Get("/layouts/{id}", s.handle(s.getLayout))
			r.Patch("/layouts/{id}", s.handle(s.updateLayout))
			r.Delete("/layouts/{id}", s.handle(s.deleteLayout))
			r.Get("/templates", s.handle(s.listTemplates))
			r.Post("/templates", s.handle(s.createTemplate))
			r.Post("/templates/preview", s.handle(s.previewTemplate))
			r.Post("/templates/lint", s.handle(s.lintContent))
			r.Get("/templates/{id}", s.handle(s.getTemplate))
			r.Patch("/templates/{id}", s.handle(s.updateTemplate))
			r.Delete("/templates/{id}", s.handle(s.deleteTemplate))
			r.Post("/templates/{id}/render", s.handle(s.renderTemplate))
			r.Post("/templates/{id}/duplicate", s.handle(s.duplicateTemplate))

			r.Get("/messages", s.handle(s.listMessages))
			r.With(s.unbounded).Get("/messages/export", s.handle(s.exportMessages))
			r.Get("/messages/{id}", s.handle(s.getMessage))
			r.Post("/messages/batch", s.handle(s.sendMessageBatch))

			r.Get("/campaigns", s.handle(s.listCampaigns))
			r.Post("/campaigns", s.handle(s.createCampaign))
			r.Get("/campaigns/{id}", s.handle(s.getCampaign))
			r.Patch("/campaigns/{id}", s.handle(s.updateCampaign))
			r.Delete("/campaigns/{id}", s.handle(s.deleteCampaign))
			r.Post("/campaigns/{id}/approve", s.handle(s.approveCampaign))
			r.Post("/campaigns/{id}/unapprove", s.handle(transition(s.Campaigns.Unapprove)))
			r.Post("/campaigns/{id}/pause", s.handle(transition(s.Campaigns.Pause)))
			r.Post("/campaigns/{id}/resume", s.handle(transition(s.Campaigns.Resume)))
			r.Post("/campaigns/{id}/cancel", s.handle(transition(s.Campaigns.Cancel)))
			r.Post("/campaigns/{id}/retry-failed", s.handle(s.retryFailed))
			r.Post("/campaigns/{id}/duplicate", s.handle(s.duplicateCampaign))
			r.Get("/campaigns/{id}/ab-test", s.handle(s.getABTest))
			r.Put("/campaigns/{id}/ab-test", s.handle(s.setABTest))
			r.Delete("/campaigns/{id}/ab-test", s.handle(s.deleteABTest))
			r.Post("/campaigns/{id}/winner", s.handle(s.chooseWinner))
			r.With(s.unbounded).Post("/campaigns/{id}/test", s.handle(s.testCampaign))
			r.Get("/campaigns/{id}/stats", s.handle(s.campaignStats))
			r.Get("/campaigns/{id}/sends", s.handle(s.campaignSends))
			r.With(s.unbounded).Get("/campaigns/{id}/recipients/export", s.handle(s.exportRecipients))
			r.Get("/campaigns/{id}/timeline", s.handle(s.campaignTimeline))
			r.Get("/campaigns/{id}/events", s.handle(s.campaignEvents))
			r.Get("/campaigns/{id}/clicks", s.handle(s.campaignClicks))
			r.Get("/campaigns/{id}/report", s.handle(s.campaignReport))
			r.Get("/analytics", s.handle(s.analytics))

			// Webhook endpoints: the credentials are in the create and
			// rotate responses only.
			r.Post("/webhook-endpoints", s.handle(s.createWebhookEndpoint))
			r.Get("/webhook-endpoints", s.handle(s.listWebhookEndpoints))
			r.Get("/webhook-endpoints/{id}", s.handle(s.getWebhookEndpoint))
			r.Post("/webhook-endpoints/{id}/rotate", s.handle(s.rotateWebhookEndpoint))
			r.Delete("/webhook-endpoints/{id}", s.handle(s.deleteWebhookEndpoint))

			// Events out: the account's events, pulled or pushed to its endpoints.
			r.Get("/events", s.handle(s.listEvents))
			r.With(s.unbounded).Get("/events/export", s.handle(s.exportEvents))
			r.Post("/events/stream-tokens", s.handle(s.createEventStreamToken))
			r.Post("/event-endpoints", s.handle(s.createEventEndpoint))
			r.Get("/event-endpoints", s.handle(s.listEventEndpoints))
			r.Get("/event-endpoints/{id}", s.handle(s.getEventEndpoint))
			r.Patch("/event-endpoints/{id}", s.handle(s.updateEventEndpoint))
			r.Delete("/event-endpoints/{id}", s.handle(s.deleteEventEndpoint))
			r.Post("/event-endpoints/{id}/rotate", s.handle(s.rotateEventEndpoint))
			r.Post("/event-endpoints/{id}/ping", s.handle(s.pingEventEndpoint))
			r.Post("/event-endpoints/{id}/redeliver", s.handle(s.redeliverEventEndpoint))
			r.Get("/event-endpoints/{id}/deliveries", s.handle(s.listEventEndpointDeliveries))
			// Senders: credentials are write-only (a masked hint comes back).
			r.Get("/sender-pools", s.handle(s.listSenderPools))
			r.Post("/sender-pools", s.handle(s.createSenderPool))
			r.Get("/sender-pools/{id}", s.handle(s.getSenderPool))
			r.Patch("/sender-pools/{id}", s.handle(s.updateSenderPool))
			r.Delete("/sender-pools/{id}", s.handle(s.deleteSenderPool))
			r.Get("/senders", s.handle(s.listSenders))
			r.Post("/senders", s.handle(s.createSender))
			r.Get("/senders/{id}", s.handle(s.getSender))
			r.Patch("/senders/{id}", s.handle(s.updateSender))
			r.Delete("/senders/{id}", s.handle(s.deleteSender))
			r.With(s.unbounded).Post("/senders/{id}/verify", s.handle(s.verifySender))
			// The bounce mailbox: its password is write-only, like sender credentials.
			r.Get("/bounce-mailbox", s.handle(s.getBounceMailbox))
			r.Put("/bounce-mailbox", s.handle(s.putBounceMailbox))
			r.Delete("/bounce-mailbox", s.handle(s.deleteBounceMailbox))
			r.Post("/domains/check", s.handle(s.checkDomain))
			// DKIM keys of a sending domain: private halves sealed, never returned.
			r.Get("/domains/{domain}/dkim-keys", s.handle(s.listDkimKeys))
			r.Post("/domains/{domain}/dkim-keys", s.handle(s.createDkimKey))
			r.Post("/domains/{domain}/dkim-keys/{id}/activate", s.handle(s.activateDkimKey))
			r.Delete("/domains/{domain}/dkim-keys/{id}", s.handle(s.deleteDkimKey))

			// Sequences: triggers, steps, enrollments; /track takes custom events.
			r.Get("/sequences", s.handle(s.listSequences))
			r.Post("/sequences", s.handle(s.createSequence))
			r.Get("/sequences/{id}", s.handle(s.getSequence))
			r.Put("/sequences/{id}", s.handle(s.updateSequence))
			r.Delete("/sequences/{id}", s.handle(s.deleteSequence))
			r.Post("/sequences/{id}/activate", s.handle(s.sequenceTransition(sequence.Activate)))
			r.Post("/sequences/{id}/pause", s.handle(s.sequenceTransition(sequence.Pause)))
			r.Post("/sequences/{id}/resume", s.handle(s.sequenceTransition(sequence.Resume)))
			r.Post("/sequences/{id}/archive", s.handle(s.sequenceTransition(sequence.Archive)))
			r.Post("/sequences/{id}/enroll", s.handle(s.enrollSequence))
			r.Get("/sequences/{id}/enrollments", s.handle(s.listSequenceEnrollments))
			r.Get("/sequences/{id}/stats", s.handle(s.sequenceStats))
			r.Post("/track", s.handle(s.trackEvent))

			// The account's people (users.go); owners and admins manage them.
			r.Get("/members", s.handle(s.listMembers))
			r.Patch("/members/{id}", s.handle(s.updateMember))
			r.Delete("/members/{id}", s.handle(s.removeMember))
			r.Post("/invitations", s.handle(s.createInvitation))
			r.Delete("/invitations/{id}", s.handle(s.revokeInvitation))
			r.Get("/account/security", s.handle(s.getAccountSecurity))
			r.Patch("/account/security", s.handle(s.updateAccountSecurity))
			r.Get("/account/sso", s.handle(s.getAccountSSO))
			r.Put("/account/sso", s.handle(s.putAccountSSO))
			r.Delete("/account/sso", s.handle(s.deleteAccountSSO))

			r.Get("/api-keys", s.handle(s.listAPIKeys))
			r.Get("/audit-log", s.handle(s.listAuditLog)) // read only: no route writes it
			r.Delete("/api-keys/{id}", s.handle(s.revokeAPIKey))
			r.Get("/dev/inbox", s.handle(s.listDevInbox))
			r.Get("/dev/inbox/{id}/html", s.handle(s.getDevInboxHTML))
		})

		// What these answer holds a secret (a key's token, a login link): not
		// stored for Idempotency-Key replays.
		r.Group(func(r chiRouter) {
			r.Use(s.authorize, s.rateLimit, s.bodyLimit, s.validateRequest, s.notIdempotent, s.recordAudit)
			r.Post("/api-keys", s.handle(s.createAPIKey))
			r.Post("/login-links", s.handle(s.createLoginLink))
		})

		// A signed-in person's own sessions, second factor and password: every role may
		// manage its own (no read-only guard), and the answers hold secrets (a new
		// session, a TOTP secret, recovery codes) no response store may keep.
		r.Group(func(r chiRouter) {
			r.Use(s.rateLimit, s.bodyLimit, s.validateRequest, s.notIdempotent)
			r.Get("/me/accounts", s.handle(s.listMyAccounts))
			r.Post("/me/switch", s.handle(s.switchAccount))
			r.Get("/me/sessions", s.handle(s.listMySessions))
			r.Delete("/me/sessions/{id}", s.handle(s.endMySession))
			r.Post("/me/two-factor", s.handle(s.startTwoFactor))
			r.Post("/me/two-factor/confirm", s.handle(s.confirmTwoFactor))
			r.Post("/me/two-factor/remove", s.handle(s.removeTwoFactor))
			r.Post("/me/password", s.handle(s.changeMyPassword))
		})

		// A message's Idempotency-Key is its own, kept as long as the message
		// (transactional.Service), not the 24-hour response store's.
		r.Group(func(r chiRouter) {
			r.Use(s.authorize, s.rateLimit, s.bodyLimit, s.validateRequest, s.recordAudit)
			r.Post("/messages", s.handle(s.sendMessage))
		})
	})
}
