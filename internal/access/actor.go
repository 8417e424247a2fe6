package access

import "context"

// The kinds of actor: a person signed in, an API key (or a dashboard session
// signed in with one, which acts as that key), or a dashboard session signed in
// with a one-time login link, which names no key and no person; or the
// operator, acting on an account as a tenant from outside it (no user, no key).
const (
	ActorUser     = "user"
	ActorKey      = "key"
	ActorSession  = "session"
	ActorOperator = "operator"
)

// Operator is the actor of the operator's actions on an account: the operator
// API and the `sendonce account` commands.
var Operator = Actor{Type: ActorOperator, Label: "operator"}

// Actor is who a request acts as: what the audit log records and the campaign
// events carry.
type Actor struct {
	Type string `json:"type"`
	ID   int64  `json:"id"`
	// Label is what the actor is called now: a person's address, a key's name.
	Label string `json:"label"`
}

type actorKey struct{}

// WithActor returns ctx carrying a.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the actor of ctx, and false when none acts (the executor, a
// provider's webhook, a public link).
func ActorFrom(ctx context.Context) (Actor, bool) {
	a, ok := ctx.Value(actorKey{}).(Actor)
	return a, ok
}
