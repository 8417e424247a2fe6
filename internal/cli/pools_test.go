package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/client"
)

// TestCLIPools: `pools create` makes a sender pool in the order of its --sender
// flags, `campaigns create --pool` names it (and `campaigns show` shows it with
// the campaign's local delivery time and sending window), a sender not the account's is
// refused (exit 4), and `pools edit` replaces the order, as `pools list` shows.
func TestCLIPools(t *testing.T) {
	t.Parallel()
	run, sdk, _ := setup(t)
	var ids []string
	for _, n := range []string{"one", "two"} {
		r, err := sdk.CreateSenderWithResponse(context.Background(), nil, client.SenderCreate{Name: n,
			Type: client.SenderCreateTypeHttp, Settings: &client.SenderSettings{Url: client.Ptr("https://relay.example/" + n)}})
		require.NoError(t, client.Check(r, err))
		ids = append(ids, itoa(r.JSON201.Id))
	}
	r := run("pools", "create", "--name", "relays", "--sender", ids[1], "--sender", ids[0], "-q")
	require.Equal(t, 0, r.code, r.stderr)
	pool := strings.TrimSpace(r.stdout)

	r = run("campaigns", "create", "--name", "on a pool", "--from", "news@example.com", "--subject", "Hi",
		"--pool", pool, "--deliver-at-local", "09:00", "--window", "sat,mon-wed,fri 08:00-20:00 Europe/Berlin", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var c client.Campaign
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &c))
	require.NotNil(t, c.PoolId)
	require.Equal(t, pool, itoa(*c.PoolId))
	require.Nil(t, c.SenderId)
	r = run("campaigns", "show", itoa(c.Id))
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `sender pool +`+pool+`\n`, r.stdout)
	require.Regexp(t, `delivered at +09:00 in each recipient's zone`, r.stdout)
	require.Regexp(t, `send window +mon-wed,fri,sat 08:00-20:00 Europe/Berlin`, r.stdout)

	r = run("pools", "create", "--name", "bad", "--sender", "999999999")
	require.Equal(t, ExitRefused, r.code, r.stderr)
	require.Contains(t, r.stderr, "sender 999999999 not found")

	r = run("pools", "edit", pool, "--sender", ids[0], "--sender", ids[1], "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var p client.SenderPool
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &p))
	require.Equal(t, []string{ids[0], ids[1]}, []string{itoa(p.Senders[0]), itoa(p.Senders[1])})
	r = run("pools", "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, pool+` +relays +`+ids[0]+` → `+ids[1]+` `, r.stdout)
}

// TestCLIMessagePool: `messages send --pool` names a sender pool; another
// account's or an unknown pool is refused (exit 4), as is --pool with --sender
// (exit 2).
func TestCLIMessagePool(t *testing.T) {
	t.Parallel()
	run, sdk, _ := setup(t)
	ctx := context.Background()
	r, err := sdk.CreateSenderWithResponse(ctx, nil, client.SenderCreate{Name: "one",
		Type: client.SenderCreateTypeHttp, Settings: &client.SenderSettings{Url: client.Ptr("https://relay.example/one")}})
	require.NoError(t, client.Check(r, err))
	p, err := sdk.CreateSenderPoolWithResponse(ctx, nil, client.SenderPoolCreate{Name: "relays", Senders: []int64{r.JSON201.Id}})
	require.NoError(t, client.Check(p, err))
	tpl, err := sdk.CreateTemplateWithResponse(ctx, nil, client.TemplateCreate{Name: "receipt", Subject: "Receipt",
		Text: client.Ptr("Thanks")})
	require.NoError(t, client.Check(tpl, err))
	send := func(key string, extra ...string) cliRun {
		return run(append([]string{"messages", "send", "--to", "ada@example.com", "--from", "shop@example.com",
			"--template", itoa(tpl.JSON201.Id), "--idempotency-key", key, "--json"}, extra...)...)
	}
	res := send("via-pool", "--pool", itoa(p.JSON201.Id))
	require.Equal(t, 0, res.code, res.stderr)
	var m client.Message
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &m))
	require.NotNil(t, m.PoolId)
	require.Equal(t, p.JSON201.Id, *m.PoolId)

	res = send("unknown", "--pool", "999999999")
	require.Equal(t, ExitRefused, res.code, res.stderr)
	require.Contains(t, res.stderr, "sender pool 999999999 not found")
	require.Equal(t, ExitUsage, send("both", "--pool", itoa(p.JSON201.Id), "--sender", itoa(r.JSON201.Id)).code)
}
