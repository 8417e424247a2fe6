package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sendonce/sendonce/client"
	"github.com/sendonce/sendonce/internal/optional"
)

// sendersCmd creates and edits senders from flags: where mail leaves, its rate,
// its pacing per recipient domain and its warm-up. Credentials are not taken on
// the command line (they would sit in the shell's history): give them through
// the API or the dashboard.
func (a *App) sendersCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "senders", Short: "List, show, create and edit senders (relays and providers, pacing, warm-up)"}
	cmd.AddCommand(a.senderReadCommands()...)
	var (
		name, typ, host, security, username, url, warm, bounceDomain string
		port                                                         int
		rate                                                         float64
		limits                                                       []string
		clearWarm, isDefault, dkimSign                               bool
	)
	cmd.AddCommand(a.writeCommands("sender", `  sendonce senders create --name relay --type smtp --host smtp.example.com --port 587 \
    --domain-limit gmail=5 --domain-limit example.org=1 --warmup standard@2026-12-01
  sendonce senders edit 3 --warmup 50,100,200,400@2026-12-01
  sendonce senders edit 3 --clear-warmup --domain-limit ''
  sendonce senders edit 3 --bounce-domain bounces.example.com --dkim-sign=false`, []string{"name", "type"},
		func(f *pflag.FlagSet) {
			f.StringVar(&name, "name", "", "the sender's name")
			f.StringVar(&typ, "type", "", "smtp, http, resend, postmark, sendgrid, mailgun or ses (create only)")
			f.StringVar(&host, "host", "", "smtp: the relay's host")
			f.IntVar(&port, "port", 0, "smtp: the relay's port")
			f.StringVar(&security, "security", "", "smtp: none, starttls or tls")
			f.StringVar(&username, "username", "", "smtp: the user name")
			f.StringVar(&url, "url", "", "http: the URL that receives each message")
			f.StringVar(&bounceDomain, "bounce-domain", "", "smtp: send with the Return-Path bounces+TOKEN@DOMAIN, whose MX delivers to the bounce mailbox ('' on edit: the From address)")
			f.BoolVar(&dkimSign, "dkim-sign", true, "smtp: sign with the From domain's active DKIM key (--dkim-sign=false: a relay that signs itself)")
			f.Float64Var(&rate, "rate-per-second", 0, "the sender's rate (0: unlimited)")
			f.StringArrayVar(&limits, "domain-limit", nil, "GROUP=PER_SECOND or DOMAIN=PER_SECOND (repeat; groups: gmail, "+
				"microsoft, yahoo, apple, gmx); '' on edit removes them all")
			f.StringVar(&warm, "warmup", "", "a warm-up schedule: PRESET@START or CAP,CAP,…@START (preset: standard; "+
				"START: YYYY-MM-DD, UTC days)")
			f.BoolVar(&clearWarm, "clear-warmup", false, "edit: remove the warm-up schedule")
			f.BoolVar(&isDefault, "default", false, "the account's default sender")
		},
		func(cmd *cobra.Command, c *client.Client, s setOf, id int64) (any, int64, string, error) {
			var settings *client.SenderSettings
			if s.has("host") || s.has("port") || s.has("security") || s.has("username") || s.has("url") ||
				s.has("bounce-domain") || s.has("dkim-sign") {
				// The API replaces a sender's settings whole: an edit starts from the stored ones.
				settings = &client.SenderSettings{}
				if id != 0 {
					r, err := c.GetSenderWithResponse(cmd.Context(), id)
					if err := client.Check(r, err); err != nil {
						return nil, 0, "", err
					}
					settings = &r.JSON200.Settings
				}
				set := func(dst **string, flag, v string) {
					if s.has(flag) {
						*dst = &v
						if v == "" {
							*dst = nil
						}
					}
				}
				set(&settings.Host, "host", host)
				set(&settings.Username, "username", username)
				set(&settings.Url, "url", url)
				set(&settings.BounceDomain, "bounce-domain", bounceDomain)
				if s.has("port") {
					settings.Port = &port
				}
				if s.has("security") {
					sec := client.SenderSettingsSecurity(security)
					settings.Security = &sec
				}
				if s.has("dkim-sign") {
					settings.DkimSign = &dkimSign
				}
			}
			var dl *[]client.SenderDomainLimit
			if s.has("domain-limit") {
				parsed, err := parseDomainLimits(limits)
				if err != nil {
					return nil, 0, "", err
				}
				dl = &parsed
			}
			var wu *client.SenderWarmup
			if s.has("warmup") {
				w, err := parseWarmup(warm)
				if err != nil {
					return nil, 0, "", err
				}
				wu = &w
			}
			var ratep *float64
			if s.has("rate-per-second") {
				ratep = &rate
			}
			var def *bool
			if s.has("default") {
				def = &isDefault
			}
			if id == 0 {
				if s.has("clear-warmup") {
					return nil, 0, "", Usage(errors.New("--clear-warmup is for edit"))
				}
				r, err := c.CreateSenderWithResponse(cmd.Context(), nil, client.SenderCreate{Name: name,
					Type: client.SenderCreateType(typ), Settings: settings, RatePerSecond: ratep, DomainLimits: dl,
					Warmup: wu, Default: def})
				if err := client.Check(r, err); err != nil {
					return nil, 0, "", err
				}
				return r.JSON201, r.JSON201.Id, r.JSON201.Name, nil
			}
			if s.has("type") {
				return nil, 0, "", Usage(errors.New("a sender's --type cannot change"))
			}
			var clear *bool
			if s.has("clear-warmup") {
				clear = &clearWarm
			}
			r, err := c.UpdateSenderWithResponse(cmd.Context(), id, client.SenderUpdate{Name: str(s, "name", name),
				Settings: settings, RatePerSecond: ratep, DomainLimits: dl, Warmup: wu, ClearWarmup: clear, Default: def})
			if err := client.Check(r, err); err != nil {
				return nil, 0, "", err
			}
			return r.JSON200, r.JSON200.Id, r.JSON200.Name, nil
		})...)
	return cmd
}

// senderGroups are the built-in domain groups a --domain-limit may name.
var senderGroups = map[string]bool{"gmail": true, "microsoft": true, "yahoo": true, "apple": true, "gmx": true}

// parseDomainLimits reads --domain-limit values: GROUP=N or DOMAIN=N; a lone ”
// is no limits at all.
func parseDomainLimits(in []string) ([]client.SenderDomainLimit, error) {
	out := []client.SenderDomainLimit{}
	for _, v := range in {
		if v == "" {
			continue
		}
		key, num, ok := strings.Cut(v, "=")
		n, err := strconv.ParseFloat(num, 64)
		if !ok || key == "" || err != nil {
			return nil, Usage(fmt.Errorf("--domain-limit %q: want GROUP=PER_SECOND or DOMAIN=PER_SECOND", v))
		}
		l := client.SenderDomainLimit{PerSecond: n}
		if senderGroups[key] {
			g := client.SenderDomainLimitGroup(key)
			l.Group = &g
		} else {
			l.Domain = &key
		}
		out = append(out, l)
	}
	return out, nil
}

// parseWarmup reads --warmup: PRESET@START or CAP,CAP,…@START.
func parseWarmup(v string) (client.SenderWarmup, error) {
	plan, start, ok := strings.Cut(v, "@")
	day, err := time.Parse(time.DateOnly, start)
	if !ok || plan == "" || err != nil {
		return client.SenderWarmup{}, Usage(fmt.Errorf("--warmup %q: want PRESET@YYYY-MM-DD or CAP,CAP,…@YYYY-MM-DD", v))
	}
	w := client.SenderWarmup{Start: openapi_types.Date{Time: day}}
	if plan[0] < '0' || plan[0] > '9' {
		p := client.SenderWarmupPreset(plan)
		w.Preset = &p
		return w, nil
	}
	var caps []int
	for _, c := range strings.Split(plan, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil {
			return client.SenderWarmup{}, Usage(fmt.Errorf("--warmup %q: %q is not a number", v, c))
		}
		caps = append(caps, n)
	}
	w.Caps = &caps
	return w, nil
}

// senderReadCommands are `senders list` and `senders show ID`: where mail leaves,
// with its pacing and where its warm-up plan stands today.
func (a *App) senderReadCommands() []*cobra.Command {
	list := &cobra.Command{
		Use:   "list",
		Short: "List the account's senders with their pacing and today's warm-up use",
		Args:  args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			all, err := everyPage(func(cursor *string) ([]client.Sender, *string, error) {
				r, err := c.ListSendersWithResponse(cmd.Context(), &client.ListSendersParams{Limit: client.Ptr(500), Cursor: cursor})
				if err := client.Check(r, err); err != nil {
					return nil, nil, err
				}
				return r.JSON200.Data, r.JSON200.NextCursor, nil
			})
			if err != nil {
				return err
			}
			return printList(a, cmd.OutOrStdout(), all, []string{"ID", "NAME", "TYPE", "STATE", "RATE", "DOMAIN LIMITS", "WARM-UP TODAY"},
				func(s client.Sender) []string {
					state := "active"
					if s.PausedReason != nil {
						state = "paused: " + *s.PausedReason
					}
					name := s.Name
					if s.Default {
						name += " (default)"
					}
					return []string{itoa(s.Id), name, string(s.Type), state, rateText(s.RatePerSecond),
						limitsText(s.DomainLimits), warmupTodayText(s)}
				})
		},
	}
	show := &cobra.Command{
		Use:     "show ID",
		Short:   "Show a sender: settings, rate, domain limits, its warm-up plan and today's place in it",
		Example: "  sendonce senders show 3",
		Args:    args(1),
		RunE: a.byID(0, func(ctx context.Context, c *client.Client, id int64, _ []string) (answer, error) {
			r, err := c.GetSenderWithResponse(ctx, id)
			if err := client.Check(r, err); err != nil {
				return answer{}, err
			}
			return answer{r.JSON200, func(out io.Writer) error { return printSender(out, r.JSON200) }}, nil
		}),
	}
	return []*cobra.Command{list, show}
}

func rateText(r float64) string {
	if r == 0 {
		return "unlimited"
	}
	return strconv.FormatFloat(r, 'f', -1, 64) + "/s"
}

func limitsText(limits []client.SenderDomainLimit) string {
	if len(limits) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(limits))
	for _, l := range limits {
		key := optional.Value(l.Domain)
		if l.Group != nil {
			key = string(*l.Group)
		}
		parts = append(parts, key+"="+strconv.FormatFloat(l.PerSecond, 'f', -1, 64)+"/s")
	}
	return strings.Join(parts, ", ")
}

// warmupPlanText is a plan as --warmup takes it: PRESET@START or CAP,CAP,…@START.
func warmupPlanText(w *client.SenderWarmup) string {
	if w == nil {
		return "-"
	}
	plan := ""
	if w.Preset != nil {
		plan = string(*w.Preset)
	} else if w.Caps != nil {
		caps := make([]string, 0, len(*w.Caps))
		for _, c := range *w.Caps {
			caps = append(caps, strconv.Itoa(c))
		}
		plan = strings.Join(caps, ",")
	}
	return plan + "@" + w.Start.Format(time.DateOnly)
}

// warmupTodayText is where the plan stands today (UTC): the day, the sends
// counted against its cap, and whether the rest waits for tomorrow.
func warmupTodayText(s client.Sender) string {
	t := s.WarmupToday
	if t == nil {
		return "-"
	}
	day := fmt.Sprintf("day %d", t.DayNumber+1)
	if s.Warmup != nil && s.Warmup.Caps != nil {
		day += fmt.Sprintf(" of %d", len(*s.Warmup.Caps))
	}
	if t.Cap == nil {
		return fmt.Sprintf("%s: the plan is over, no cap (%d sent today)", day, t.Used)
	}
	text := fmt.Sprintf("%s: %d of %d used", day, t.Used, *t.Cap)
	if t.Used >= *t.Cap {
		text += "; the rest waits for tomorrow"
	}
	return text
}

func credentialsText(hint string) string {
	if hint == "" {
		return "none"
	}
	return "stored, ending " + hint
}

// printSender is a sender for people, field by field.
func printSender(out io.Writer, s *client.Sender) error {
	var settings []string
	b, _ := json.Marshal(s.Settings)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		settings = append(settings, fmt.Sprintf("%s: %v", k, m[k]))
	}
	rows := [][]string{
		{"id", itoa(s.Id)}, {"name", s.Name}, {"type", string(s.Type)}, {"default", strconv.FormatBool(s.Default)},
		{"settings", strings.Join(settings, ", ")}, {"credentials", credentialsText(s.CredentialsHint)},
		{"rate", rateText(s.RatePerSecond)}, {"domain limits", limitsText(s.DomainLimits)},
		{"warm-up", warmupPlanText(s.Warmup)}, {"warm-up today", warmupTodayText(*s)},
	}
	if s.PausedReason != nil {
		rows = append(rows, []string{"paused because", *s.PausedReason})
	}
	return table(out, []string{"FIELD", "VALUE"}, rows)
}
