// Package access names what a caller of the tenant API may do: the permissions,
// the roles that bundle them, the permission every route needs, and the actor (a
// person or an API key) a request acts as. It knows nothing of HTTP or storage:
// httpapi enforces the route table in one middleware, and the domain packages read
// the actor from the context to record who did what.
package access

import (
	"slices"
	"sort"
	"strings"
)

// Permission is one thing a caller may do, named area:verb.
type Permission string

// The permissions. Reads are one per area; writes are split where teams split the
// work: an editor prepares (audience, templates, drafts), an approver decides
// (approve, pause, cancel, activate), an admin wires the account (senders,
// endpoints, keys). docs/teams.md is this list with the matrix below.
const (
	AccountRead   Permission = "account:read"   // GET /v1/account
	AccountManage Permission = "account:manage" // account settings: unsubscribe scope, four eyes

	AudienceRead  Permission = "audience:read"  // subscribers, lists, segments, suppressions; previews
	AudienceWrite Permission = "audience:write" // create, change, import, delete them

	TemplatesRead  Permission = "templates:read"  // templates, previews and renders
	TemplatesWrite Permission = "templates:write" // create, change, delete templates

	CampaignsRead    Permission = "campaigns:read"    // campaigns, their sends, stats, timeline
	CampaignsWrite   Permission = "campaigns:write"   // create, edit and delete drafts, test sends
	CampaignsApprove Permission = "campaigns:approve" // approve (schedule), unapprove, pause, resume, cancel

	SequencesRead     Permission = "sequences:read"     // sequences, enrollments, stats
	SequencesWrite    Permission = "sequences:write"    // create, change, delete sequences
	SequencesActivate Permission = "sequences:activate" // activate, pause, resume, archive, enroll
	TrackingWrite     Permission = "tracking:write"     // POST /v1/track: custom events that drive sequences

	MessagesRead Permission = "messages:read" // transactional messages, the dev inbox
	MessagesSend Permission = "messages:send" // POST /v1/messages and /v1/messages/batch

	SendersRead   Permission = "senders:read"   // senders
	SendersManage Permission = "senders:manage" // create, change, verify, delete senders; domain checks

	EventsRead     Permission = "events:read"     // events, event and webhook endpoints, stream tokens
	WebhooksManage Permission = "webhooks:manage" // event endpoints and inbound webhook endpoints

	KeysRead   Permission = "keys:read"   // the account's API keys (never their tokens)
	KeysManage Permission = "keys:manage" // create and revoke keys, make login links

	AuditRead Permission = "audit:read" // GET /v1/audit-log

	// MembersManage and OwnersManage are for the account's people: inviting,
	// removing and changing the role of members; only an owner may make or unmake
	// an owner.
	MembersManage Permission = "members:manage"
	OwnersManage  Permission = "owners:manage"
)

// All is every permission, in the order the documentation lists them.
var All = []Permission{
	AccountRead, AccountManage, AudienceRead, AudienceWrite, TemplatesRead, TemplatesWrite,
	CampaignsRead, CampaignsWrite, CampaignsApprove, SequencesRead, SequencesWrite, SequencesActivate,
	TrackingWrite, MessagesRead, MessagesSend, SendersRead, SendersManage, EventsRead, WebhooksManage,
	KeysRead, KeysManage, AuditRead, MembersManage, OwnersManage,
}

// Valid reports whether p is a permission this version knows.
func Valid(p Permission) bool { return slices.Contains(All, p) }

// Read reports whether p only reads (its verb is read): such routes change
// nothing and leave no audit entry.
func (p Permission) Read() bool { return strings.HasSuffix(string(p), ":read") }

// Set is a set of permissions.
type Set map[Permission]bool

// NewSet returns the set of ps.
func NewSet(ps ...Permission) Set {
	s := make(Set, len(ps))
	for _, p := range ps {
		s[p] = true
	}
	return s
}

// Has reports whether p is in the set.
func (s Set) Has(p Permission) bool { return s[p] }

// Covers reports whether every permission of o is in s (a caller may hand on only
// what it holds).
func (s Set) Covers(o Set) bool {
	for p := range o {
		if !s[p] {
			return false
		}
	}
	return true
}

// List returns the set in the order of All.
func (s Set) List() []Permission {
	out := make([]Permission, 0, len(s))
	for _, p := range All {
		if s[p] {
			out = append(out, p)
		}
	}
	return out
}

// The roles of a person or a key. RoleFull and RoleReadOnly are the two roles
// keys had before roles existed; they stay valid names, with the permissions of
// admin and viewer, so a key made before keeps what it could do and reads back as
// it did.
const (
	RoleOwner    = "owner"
	RoleAdmin    = "admin"
	RoleEditor   = "editor"
	RoleApprover = "approver"
	RoleViewer   = "viewer"
	RoleFull     = "full"
	RoleReadOnly = "read_only"
	// RoleCustom is a key's role when it carries an explicit permission list.
	RoleCustom = "custom"
)

// Roles are the five roles of a team, most powerful first.
var Roles = []string{RoleOwner, RoleAdmin, RoleEditor, RoleApprover, RoleViewer}

func reads() []Permission {
	var out []Permission
	for _, p := range All {
		if p.Read() {
			out = append(out, p)
		}
	}
	return out
}

func without(ps []Permission, drop ...Permission) []Permission {
	return slices.DeleteFunc(slices.Clone(ps), func(p Permission) bool { return slices.Contains(drop, p) })
}

// matrix is the role → permissions table. A viewer reads everything (the audit
// log too); an editor prepares what others send; an approver decides what is sent;
// an admin may do everything but make or unmake owners.
var matrix = map[string]Set{
	RoleOwner:    NewSet(All...),
	RoleAdmin:    NewSet(without(All, OwnersManage)...),
	RoleEditor:   NewSet(append(reads(), AudienceWrite, TemplatesWrite, CampaignsWrite, SequencesWrite)...),
	RoleApprover: NewSet(append(reads(), CampaignsApprove, SequencesActivate)...),
	RoleViewer:   NewSet(reads()...),
}

func init() {
	matrix[RoleFull] = matrix[RoleAdmin]
	matrix[RoleReadOnly] = matrix[RoleViewer]
}

// RolePermissions returns the permissions of a role, and false for a name that is
// no role.
func RolePermissions(role string) (Set, bool) {
	s, ok := matrix[role]
	if !ok {
		return nil, false
	}
	out := make(Set, len(s))
	for p := range s {
		out[p] = true
	}
	return out, true
}

// ValidRole reports whether role is one of the five roles or a key's legacy one.
func ValidRole(role string) bool {
	_, ok := matrix[role]
	return ok
}

// ParseList returns the set named by ps, or the first name that is no permission.
func ParseList(ps []string) (Set, string) {
	s := make(Set, len(ps))
	for _, p := range ps {
		if !Valid(Permission(p)) {
			return nil, p
		}
		s[Permission(p)] = true
	}
	return s, ""
}

// Strings returns the set's names, sorted as All orders them.
func (s Set) Strings() []string {
	out := make([]string, 0, len(s))
	for _, p := range s.List() {
		out = append(out, string(p))
	}
	return out
}

// sortedRoles is Roles plus the legacy names, for error messages.
func sortedRoles() []string {
	out := make([]string, 0, len(matrix))
	for r := range matrix {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// RoleNames is every role name a key accepts, comma-separated, for error messages.
func RoleNames() string { return strings.Join(sortedRoles(), ", ") }
