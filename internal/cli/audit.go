package cli

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/sendonce/sendonce/client"
)

func (a *App) auditCmd() *cobra.Command {
	var (
		actorType, action, targetType, targetID, since, until string
		actorID                                               int64
		limit                                                 int
	)
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show who changed what: the account's audit log, newest first",
		Long: `Show the account's audit log, newest first: one entry per committed change made through the
API, with the actor (a person, an API key, or a login-link session), the action, what it changed and
the request id. Needs a key (or session) with audit:read.`,
		Example: `  sendonce audit --target-type campaign --target-id 42
  sendonce audit --action campaign.approve --since 2026-11-01T00:00:00Z --json`,
		Args: args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 {
				return Usage(errors.New("--limit must be at least 1"))
			}
			var params client.ListAuditLogParams
			if actorType != "" {
				params.ActorType = client.Ptr(client.ListAuditLogParamsActorType(actorType))
			}
			if actorID != 0 {
				params.ActorId = &actorID
			}
			for _, s := range []struct {
				v    string
				into **string
			}{{action, &params.Action}, {targetType, &params.TargetType}, {targetID, &params.TargetId}} {
				if s.v != "" {
					v := s.v
					*s.into = &v
				}
			}
			for _, t := range []struct {
				flag, v string
				into    **time.Time
			}{{"--since", since, &params.Since}, {"--until", until, &params.Until}} {
				if t.v == "" {
					continue
				}
				at, err := time.Parse(time.RFC3339, t.v)
				if err != nil {
					return Usage(errors.New(t.flag + " must be an RFC 3339 time, such as 2026-11-01T00:00:00Z"))
				}
				*t.into = &at
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			all := []client.AuditEntry{}
			for e, err := range c.AuditLog(cmd.Context(), params) {
				if err != nil {
					return err
				}
				all = append(all, e)
				if len(all) == limit {
					break
				}
			}
			return printList(a, cmd.OutOrStdout(), all, []string{"WHEN", "ACTOR", "ACTION", "TARGET", "REQUEST"},
				func(e client.AuditEntry) []string {
					target := e.TargetType
					if e.TargetId != nil {
						target += " " + *e.TargetId
					}
					return []string{when(&e.CreatedAt), string(e.Actor.Type) + " " + itoa(e.Actor.Id) + " (" + e.Actor.Label + ")",
						e.Action, target, e.RequestId}
				})
		},
	}
	f := cmd.Flags()
	f.StringVar(&actorType, "actor-type", "", "only this kind of actor: user, key or session")
	f.Int64Var(&actorID, "actor-id", 0, "only this actor (with --actor-type)")
	f.StringVar(&action, "action", "", "only this action, such as campaign.approve")
	f.StringVar(&targetType, "target-type", "", "only entries about this kind of thing, such as campaign")
	f.StringVar(&targetID, "target-id", "", "only entries about this one (with --target-type)")
	f.StringVar(&since, "since", "", "entries at or after this time (RFC 3339)")
	f.StringVar(&until, "until", "", "entries before this time (RFC 3339)")
	f.IntVar(&limit, "limit", 50, "show at most this many entries")
	return cmd
}
