package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sendonce/sendonce/client"
)

// sendersCmd creates and edits senders from flags: where mail leaves, its rate,
// its pacing per recipient domain and its warm-up. Credentials are not taken on
// the command line (they would sit in the shell's history): give them through
// the API or the dashboard.
func (a *App) sendersCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "senders", Short: "Create and edit senders (relays and providers, pacing, warm-up)"}
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
