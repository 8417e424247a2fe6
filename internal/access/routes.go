package access

// Rule is what one route of the API needs and what its audit entry says.
type Rule struct {
	// Permission is what the caller needs; empty for a public route (no account,
	// or a route that authenticates itself another way).
	Permission Permission
	// Action names the change in the audit log ("campaign.approve"); empty for a
	// route that changes nothing.
	Action string
	// Target is the kind of thing the route acts on ("campaign"); its id is the
	// route's {id} (or {email}) parameter, or what the change reports (a create).
	Target string
	// Operator marks a route of the operator API (/operator/v1): no tenant's, so
	// no permission of the matrix applies; its own middleware, which takes only the
	// operator key, is its one gate.
	Operator bool
}

// Public marks a route that needs no permission: it carries no API key (an
// opt-out link, a provider's webhook, sign-in) or is outside the tenant API.
var Public = Rule{}

// OperatorOnly marks a route of the operator API: outside the tenant permission
// check, behind the operator key alone (httpapi's operatorOnly).
var OperatorOnly = Rule{Operator: true}

// read is a rule that needs p and records nothing.
func read(p Permission) Rule { return Rule{Permission: p} }

// write is a rule that needs p and records action on a target.
func write(p Permission, action, target string) Rule {
	return Rule{Permission: p, Action: action, Target: target}
}

// Routes is every route of the server, "METHOD pattern" as chi matches it, with
// its rule. The authorization middleware refuses a route that is missing here
// (fail closed), and a test holds this table and the router to the same list.
var Routes = map[string]Rule{
	"GET /healthz":      Public,
	"GET /readyz":       Public,
	"GET /metrics":      Public,
	"GET /openapi.yaml": Public,
	"GET /docs":         Public,
	"GET /u/{token}":    Public,
	"POST /u/{token}":   Public,
	"POST /v1/webhooks/{source}/{endpoint_id}": Public,
	"GET /c/{token}":                        Public,
	"GET /o/{token}":                        Public,
	"GET /v/{token}":                        Public,
	"GET /archive/{account_public_id}":      Public,
	"GET /archive/{account_public_id}/{id}": Public,
	"GET /media/{account_public_id}/{file}": Public,
	"POST /p/{account_public_id}/subscribe": Public,
	"GET /p/confirm/{token}":                Public,
	"POST /p/confirm/{token}":               Public,
	"GET /app":                              Public,
	"GET /app/assets/{version}/{name}":      Public,
	"POST /v1/session":                      Public,
	"GET /v1/session":                       Public,
	"DELETE /v1/session":                    Public,

	// The operator API: accounts as tenants (docs/operations.md, Operating accounts).
	"GET /operator/v1/accounts":               OperatorOnly,
	"POST /operator/v1/accounts":              OperatorOnly,
	"GET /operator/v1/accounts/{id}":          OperatorOnly,
	"DELETE /operator/v1/accounts/{id}":       OperatorOnly,
	"PUT /operator/v1/accounts/{id}/quotas":   OperatorOnly,
	"POST /operator/v1/accounts/{id}/suspend": OperatorOnly,
	"POST /operator/v1/accounts/{id}/resume":  OperatorOnly,
	// The stream authenticates itself (a key, or a token minted with events:read)
	// and checks the key's permission there.
	"GET /v1/events/stream": read(EventsRead),

	// Reports, exports and a person's data (docs/reports.md).
	"GET /v1/analytics":                        read(CampaignsRead),
	"GET /v1/campaigns/{id}/report":            read(CampaignsRead),
	"GET /v1/campaigns/{id}/recipients/export": read(CampaignsRead),
	"POST /v1/campaigns/{id}/duplicate":        write(CampaignsWrite, "campaign.duplicate", "campaign"),
	"POST /v1/campaigns/{id}/retry-failed":     write(CampaignsApprove, "campaign.retry_failed", "campaign"),
	"GET /v1/campaigns/{id}/ab-test":           read(CampaignsRead),
	"PUT /v1/campaigns/{id}/ab-test":           write(CampaignsWrite, "campaign.ab_test_set", "campaign"),
	"DELETE /v1/campaigns/{id}/ab-test":        write(CampaignsWrite, "campaign.ab_test_delete", "campaign"),
	"POST /v1/campaigns/{id}/winner":           write(CampaignsApprove, "campaign.winner_choose", "campaign"),
	"GET /v1/subscribers/count":                read(AudienceRead),
	"GET /v1/subscribers/export":               read(AudienceRead),
	"GET /v1/subscribers/{id}/activity":        read(AudienceRead),
	"GET /v1/subscribers/{id}/export":          read(AudienceRead),
	"POST /v1/subscribers/{id}/erase":          write(AudienceWrite, "subscriber.erase", "subscriber"),
	"GET /v1/suppressions/export":              read(AudienceRead),
	"GET /v1/suppressions/{email}":             read(AudienceRead),
	"GET /v1/messages/export":                  read(MessagesRead),
	"GET /v1/events/export":                    read(EventsRead),

	// A person's sign-in, invitation acceptance and password reset carry no key
	// (docs/teams.md, People and sign-in).
	"POST /v1/session/password":         Public,
	"POST /v1/session/email-link":       Public,
	"POST /v1/session/second-factor":    Public,
	"POST /v1/sign-in-links":            Public,
	"POST /v1/password-resets":          Public,
	"POST /v1/password-resets/complete": Public,
	"POST /v1/invitations/accept":       Public,
	// A signed-in person's own accounts, sessions and second factor: every role
	// manages its own (the handlers refuse anything but a person's session).
	"GET /v1/me/accounts":            Public,
	"POST /v1/me/switch":             Public,
	"GET /v1/me/sessions":            Public,
	"DELETE /v1/me/sessions/{id}":    Public,
	"POST /v1/me/two-factor":         Public,
	"POST /v1/me/two-factor/confirm": Public,
	"POST /v1/me/two-factor/remove":  Public,
	"POST /v1/me/password":           Public,

	// The account's people.
	"GET /v1/members":             read(AccountRead),
	"PATCH /v1/members/{id}":      write(MembersManage, "member.update", "member"),
	"DELETE /v1/members/{id}":     write(MembersManage, "member.remove", "member"),
	"POST /v1/invitations":        write(MembersManage, "invitation.create", "invitation"),
	"DELETE /v1/invitations/{id}": write(MembersManage, "invitation.revoke", "invitation"),
	"GET /v1/account/security":    read(AccountRead),
	"PATCH /v1/account/security":  write(AccountManage, "account.security", "account"),
	// Single sign-on settings are the owners' and admins' (the issuer and client
	// are not for every member to read); the browser routes of a sign-in carry no key.
	"GET /v1/account/sso":    read(AccountManage),
	"PUT /v1/account/sso":    write(AccountManage, "account.sso_update", "account"),
	"DELETE /v1/account/sso": write(AccountManage, "account.sso_delete", "account"),
	"GET /sso/start":         Public,
	"GET /sso/callback":      Public,

	"GET /v1/account":   read(AccountRead),
	"PATCH /v1/account": write(AccountManage, "account.update", "account"),

	"GET /v1/subscribers":               read(AudienceRead),
	"POST /v1/subscribers":              write(AudienceWrite, "subscriber.create", "subscriber"),
	"POST /v1/subscribers/import":       write(AudienceWrite, "subscriber.import", "list"),
	"GET /v1/subscribers/{id}":          read(AudienceRead),
	"PATCH /v1/subscribers/{id}":        write(AudienceWrite, "subscriber.update", "subscriber"),
	"DELETE /v1/subscribers/{id}":       write(AudienceWrite, "subscriber.delete", "subscriber"),
	"POST /v1/subscribers/{id}/confirm": write(AudienceWrite, "subscriber.confirm", "subscriber"),
	"GET /v1/subscribers/{id}/lists":    read(AudienceRead),

	"GET /v1/lists":                 read(AudienceRead),
	"POST /v1/lists":                write(AudienceWrite, "list.create", "list"),
	"GET /v1/lists/{id}":            read(AudienceRead),
	"PATCH /v1/lists/{id}":          write(AudienceWrite, "list.update", "list"),
	"DELETE /v1/lists/{id}":         write(AudienceWrite, "list.delete", "list"),
	"POST /v1/lists/{id}/members":   write(AudienceWrite, "list.members_add", "list"),
	"DELETE /v1/lists/{id}/members": write(AudienceWrite, "list.members_remove", "list"),

	"GET /v1/segments":                        read(AudienceRead),
	"POST /v1/segments":                       write(AudienceWrite, "segment.create", "segment"),
	"POST /v1/segments/preview":               read(AudienceRead),
	"GET /v1/segments/{id}":                   read(AudienceRead),
	"PUT /v1/segments/{id}":                   write(AudienceWrite, "segment.update", "segment"),
	"DELETE /v1/segments/{id}":                write(AudienceWrite, "segment.delete", "segment"),
	"GET /v1/segments/{id}/subscribers":       read(AudienceRead),
	"GET /v1/segments/{id}/subscribers/count": read(AudienceRead),

	"GET /v1/suppressions":            read(AudienceRead),
	"POST /v1/suppressions":           write(AudienceWrite, "suppression.create", "suppression"),
	"DELETE /v1/suppressions/{email}": write(AudienceWrite, "suppression.delete", "suppression"),

	"GET /v1/layouts":                read(TemplatesRead),
	"POST /v1/layouts":               write(TemplatesWrite, "layout.create", "layout"),
	"GET /v1/layouts/{id}":           read(TemplatesRead),
	"PATCH /v1/layouts/{id}":         write(TemplatesWrite, "layout.update", "layout"),
	"DELETE /v1/layouts/{id}":        write(TemplatesWrite, "layout.delete", "layout"),
	"GET /v1/templates":              read(TemplatesRead),
	"GET /v1/media":                  read(TemplatesRead),
	"POST /v1/media":                 write(TemplatesWrite, "media.upload", "media"),
	"GET /v1/media/{id}":             read(TemplatesRead),
	"DELETE /v1/media/{id}":          write(TemplatesWrite, "media.delete", "media"),
	"POST /v1/templates":             write(TemplatesWrite, "template.create", "template"),
	"POST /v1/templates/preview":     read(TemplatesRead),
	"POST /v1/templates/lint":        read(TemplatesRead),
	"GET /v1/templates/{id}":         read(TemplatesRead),
	"PATCH /v1/templates/{id}":       write(TemplatesWrite, "template.update", "template"),
	"DELETE /v1/templates/{id}":      write(TemplatesWrite, "template.delete", "template"),
	"POST /v1/templates/{id}/render": read(TemplatesRead),
	// Copying a template writes a new one.
	"POST /v1/templates/{id}/duplicate": write(TemplatesWrite, "template.duplicate", "template"),

	"GET /v1/messages":        read(MessagesRead),
	"GET /v1/messages/{id}":   read(MessagesRead),
	"POST /v1/messages":       write(MessagesSend, "message.send", "message"),
	"POST /v1/messages/batch": write(MessagesSend, "message.send_batch", "message"),

	"GET /v1/campaigns":                 read(CampaignsRead),
	"POST /v1/campaigns":                write(CampaignsWrite, "campaign.create", "campaign"),
	"GET /v1/campaigns/{id}":            read(CampaignsRead),
	"PATCH /v1/campaigns/{id}":          write(CampaignsWrite, "campaign.update", "campaign"),
	"DELETE /v1/campaigns/{id}":         write(CampaignsWrite, "campaign.delete", "campaign"),
	"POST /v1/campaigns/{id}/approve":   write(CampaignsApprove, "campaign.approve", "campaign"),
	"POST /v1/campaigns/{id}/unapprove": write(CampaignsApprove, "campaign.unapprove", "campaign"),
	"POST /v1/campaigns/{id}/pause":     write(CampaignsApprove, "campaign.pause", "campaign"),
	"POST /v1/campaigns/{id}/resume":    write(CampaignsApprove, "campaign.resume", "campaign"),
	"POST /v1/campaigns/{id}/cancel":    write(CampaignsApprove, "campaign.cancel", "campaign"),
	"POST /v1/campaigns/{id}/test":      write(CampaignsWrite, "campaign.test_send", "campaign"),
	"GET /v1/campaigns/{id}/stats":      read(CampaignsRead),
	"GET /v1/campaigns/{id}/sends":      read(CampaignsRead),
	"GET /v1/campaigns/{id}/timeline":   read(CampaignsRead),
	"GET /v1/campaigns/{id}/events":     read(CampaignsRead),
	"GET /v1/campaigns/{id}/clicks":     read(CampaignsRead),

	"POST /v1/webhook-endpoints":             write(WebhooksManage, "webhook_endpoint.create", "webhook_endpoint"),
	"GET /v1/webhook-endpoints":              read(EventsRead),
	"GET /v1/webhook-endpoints/{id}":         read(EventsRead),
	"POST /v1/webhook-endpoints/{id}/rotate": write(WebhooksManage, "webhook_endpoint.rotate", "webhook_endpoint"),
	"DELETE /v1/webhook-endpoints/{id}":      write(WebhooksManage, "webhook_endpoint.delete", "webhook_endpoint"),

	"GET /v1/events":                          read(EventsRead),
	"POST /v1/events/stream-tokens":           read(EventsRead),
	"POST /v1/event-endpoints":                write(WebhooksManage, "event_endpoint.create", "event_endpoint"),
	"GET /v1/event-endpoints":                 read(EventsRead),
	"GET /v1/event-endpoints/{id}":            read(EventsRead),
	"PATCH /v1/event-endpoints/{id}":          write(WebhooksManage, "event_endpoint.update", "event_endpoint"),
	"DELETE /v1/event-endpoints/{id}":         write(WebhooksManage, "event_endpoint.delete", "event_endpoint"),
	"POST /v1/event-endpoints/{id}/rotate":    write(WebhooksManage, "event_endpoint.rotate", "event_endpoint"),
	"POST /v1/event-endpoints/{id}/ping":      write(WebhooksManage, "event_endpoint.ping", "event_endpoint"),
	"POST /v1/event-endpoints/{id}/redeliver": write(WebhooksManage, "event_endpoint.redeliver", "event_endpoint"),
	"GET /v1/event-endpoints/{id}/deliveries": read(EventsRead),

	"GET /v1/sender-pools":                              read(SendersRead),
	"POST /v1/sender-pools":                             write(SendersManage, "sender_pool.create", "sender_pool"),
	"GET /v1/sender-pools/{id}":                         read(SendersRead),
	"PATCH /v1/sender-pools/{id}":                       write(SendersManage, "sender_pool.update", "sender_pool"),
	"DELETE /v1/sender-pools/{id}":                      write(SendersManage, "sender_pool.delete", "sender_pool"),
	"GET /v1/senders":                                   read(SendersRead),
	"POST /v1/senders":                                  write(SendersManage, "sender.create", "sender"),
	"GET /v1/senders/{id}":                              read(SendersRead),
	"PATCH /v1/senders/{id}":                            write(SendersManage, "sender.update", "sender"),
	"DELETE /v1/senders/{id}":                           write(SendersManage, "sender.delete", "sender"),
	"POST /v1/senders/{id}/verify":                      write(SendersManage, "sender.verify", "sender"),
	"GET /v1/bounce-mailbox":                            read(SendersRead),
	"PUT /v1/bounce-mailbox":                            write(SendersManage, "bounce_mailbox.set", "bounce_mailbox"),
	"DELETE /v1/bounce-mailbox":                         write(SendersManage, "bounce_mailbox.delete", "bounce_mailbox"),
	"POST /v1/domains/check":                            read(SendersManage), // a DNS look-up: changes nothing
	"GET /v1/domains/{domain}/dkim-keys":                read(SendersRead),
	"POST /v1/domains/{domain}/dkim-keys":               write(SendersManage, "dkim_key.create", "dkim_key"),
	"POST /v1/domains/{domain}/dkim-keys/{id}/activate": write(SendersManage, "dkim_key.activate", "dkim_key"),
	"DELETE /v1/domains/{domain}/dkim-keys/{id}":        write(SendersManage, "dkim_key.delete", "dkim_key"),

	"GET /v1/sequences":                  read(SequencesRead),
	"POST /v1/sequences":                 write(SequencesWrite, "sequence.create", "sequence"),
	"GET /v1/sequences/{id}":             read(SequencesRead),
	"PUT /v1/sequences/{id}":             write(SequencesWrite, "sequence.update", "sequence"),
	"DELETE /v1/sequences/{id}":          write(SequencesWrite, "sequence.delete", "sequence"),
	"POST /v1/sequences/{id}/activate":   write(SequencesActivate, "sequence.activate", "sequence"),
	"POST /v1/sequences/{id}/pause":      write(SequencesActivate, "sequence.pause", "sequence"),
	"POST /v1/sequences/{id}/resume":     write(SequencesActivate, "sequence.resume", "sequence"),
	"POST /v1/sequences/{id}/archive":    write(SequencesActivate, "sequence.archive", "sequence"),
	"POST /v1/sequences/{id}/enroll":     write(SequencesActivate, "sequence.enroll", "sequence"),
	"GET /v1/sequences/{id}/enrollments": read(SequencesRead),
	"GET /v1/sequences/{id}/stats":       read(SequencesRead),
	"POST /v1/track":                     write(TrackingWrite, "tracking.event", "subscriber"),

	"GET /v1/api-keys":         read(KeysRead),
	"POST /v1/api-keys":        write(KeysManage, "api_key.create", "api_key"),
	"DELETE /v1/api-keys/{id}": write(KeysManage, "api_key.revoke", "api_key"),
	"POST /v1/login-links":     write(KeysManage, "login_link.create", "login_link"),

	"GET /v1/dev/inbox":           read(MessagesRead),
	"GET /v1/dev/inbox/{id}/html": read(MessagesRead),

	"GET /v1/audit-log": read(AuditRead),
}
