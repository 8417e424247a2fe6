// Package largeaccount is `sendonce-harness largeaccount`: one account seeded in bulk
// with 1,000,000 subscribers, 500 sent campaigns and 5,000,000 sends (and lists,
// suppressions, transactional messages and events), then every API call the
// dashboard's pages make timed against the real service (`sendonce serve` of the
// product binary), each asked a number of times in a row, its p50 and p95 printed.
// A harness: the product binary does not carry it.
package largeaccount

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/harnessstore"
	"github.com/sendonce/sendonce/internal/pgcluster"
	"github.com/sendonce/sendonce/internal/postgres"
)

// Sizes is how large the seeded account is.
type Sizes struct {
	Subscribers      int64
	Lists            int
	Campaigns        int
	SendsPerCampaign int64
	Messages         int
	Events           int
}

// accountName names the seeded account; a database that has it is not seeded again.
const accountName = "large account"

// Command runs the harness: flags in args, the product binary bin. With
// SENDONCE_DATABASE_URL (cfg) it seeds that database unless it already holds the
// large account, so a second run (after an index is added) times the same data;
// without it a throwaway cluster is seeded, its folder kept after the run with -keep.
func Command(ctx context.Context, bin string, cfg config.Config, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("largeaccount", flag.ContinueOnError)
	var sz Sizes
	fs.Int64Var(&sz.Subscribers, "subscribers", 1_000_000, "subscribers of the account")
	fs.IntVar(&sz.Lists, "lists", 10, "lists, each subscriber in one")
	fs.IntVar(&sz.Campaigns, "campaigns", 500, "sent campaigns")
	fs.Int64Var(&sz.SendsPerCampaign, "sends-per-campaign", 10_000, "sends of each campaign (500 × 10,000: 5,000,000)")
	fs.IntVar(&sz.Messages, "messages", 50_000, "transactional messages")
	fs.IntVar(&sz.Events, "events", 200_000, "events over the last 30 days")
	reps := fs.Int("reps", 20, "times each call is asked")
	chromium := fs.String("chromium", "", "with the path of Chromium: also time each dashboard page's load in it (headless)")
	keep := fs.Bool("keep", false, "keep the throwaway cluster's folder after the run, to start it again and time the same data")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if cfg.DatabaseURL == "" {
		dbURL, stop, err := pgcluster.Throwaway(ctx, true, stderr)
		if err != nil {
			return err
		}
		if *keep {
			// The server stops with this process (pgcluster); its folder stays.
			fmt.Fprintf(stdout, "# kept: the folder named above on stderr; start it again with `postgres -D FOLDER/data -p PORT`"+
				" (as the postgres user) and run again with SENDONCE_DATABASE_URL=%s\n", dbURL)
		} else {
			defer stop()
		}
		cfg.DatabaseURL = dbURL
	}
	openCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pool, err := postgres.Open(openCtx, cfg.DatabaseURL, 4)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		return err
	}
	accounts := account.NewService(pool)
	var key string
	var accountID int64
	if acct, err := accounts.FindByName(ctx, accountName); err == nil {
		accountID = acct.ID
		fmt.Fprintf(stdout, "# the database already holds %q (account %d): not seeded again\n", accountName, acct.ID)
		if key, err = accounts.CreateKey(ctx, acct.ID, "largeaccount"); err != nil {
			return err
		}
	} else {
		acct, k, err := accounts.Create(ctx, accountName)
		if err != nil {
			return err
		}
		key, accountID = k, acct.ID
		if err := Seed(ctx, pool, acct.ID, sz, stdout); err != nil {
			return err
		}
	}

	base, stopServe, err := serve(ctx, bin, cfg.DatabaseURL, stderr)
	if err != nil {
		return err
	}
	defer stopServe()
	calls, err := pageCalls(ctx, base, key)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "# %d repetitions of each call, one at a time, after one unmeasured call; milliseconds\n", *reps)
	fmt.Fprintf(stdout, "%-14s %-92s %8s %8s %8s  %s\n", "page", "call", "p50", "p95", "max", "refused")
	var slow []string
	for _, c := range calls {
		d, refused, err := timeCall(ctx, base, key, c, *reps)
		if err != nil {
			return err
		}
		p50, p95, maxMs := pct(d, 50), pct(d, 95), pct(d, 100)
		fmt.Fprintf(stdout, "%-14s %-92s %8.1f %8.1f %8.1f  %s\n", c.page, c.method+" "+c.path, p50, p95, maxMs, refused)
		if p95 >= 300 || refused != "" {
			slow = append(slow, c.method+" "+c.path)
		}
	}
	if len(slow) > 0 {
		fmt.Fprintf(stdout, "# p95 of 300 ms or more: %s\n", strings.Join(slow, "; "))
	} else {
		fmt.Fprintln(stdout, "# every call's p95 is under 300 ms")
	}
	if *chromium != "" {
		return pageTimes(ctx, *chromium, base, key, pool, accountID, max(*reps/4, 3), stdout)
	}
	return nil
}

// Seed fills the account in bulk, printing how long each part took.
func Seed(ctx context.Context, pool *pgxpool.Pool, accountID int64, sz Sizes, stdout io.Writer) error {
	q := harnessstore.New(pool)
	step := func(what string, fn func() (int64, error)) error {
		start := time.Now()
		n, err := fn()
		if err != nil {
			return fmt.Errorf("seeding %s: %w", what, err)
		}
		fmt.Fprintf(stdout, "# seeded %d %s in %.1fs\n", n, what, time.Since(start).Seconds())
		return nil
	}
	if err := step("subscribers", func() (int64, error) {
		var total int64
		for first := int64(1); first <= sz.Subscribers; first += 100_000 {
			last := min(first+100_000-1, sz.Subscribers)
			n, err := q.LargeSubscribersInsert(ctx, harnessstore.LargeSubscribersInsertParams{AccountID: accountID, First: first, Last: last})
			if err != nil {
				return total, err
			}
			total += n
		}
		return total, nil
	}); err != nil {
		return err
	}
	lists, err := q.LargeListsInsert(ctx, harnessstore.LargeListsInsertParams{AccountID: accountID, N: int32(sz.Lists)})
	if err != nil {
		return err
	}
	if err := step("list memberships", func() (int64, error) {
		return q.LargeListMembersInsert(ctx, harnessstore.LargeListMembersInsertParams{ListIds: lists, AccountID: accountID})
	}); err != nil {
		return err
	}
	first, err := q.LargeSubscriberFirst(ctx, accountID)
	if err != nil {
		return err
	}
	var campaigns []int64
	if err := step("campaigns", func() (int64, error) {
		campaigns, err = q.LargeCampaignsInsert(ctx, harnessstore.LargeCampaignsInsertParams{AccountID: accountID, ListIds: lists, N: int32(sz.Campaigns)})
		return int64(len(campaigns)), err
	}); err != nil {
		return err
	}
	if err := step("sends", func() (int64, error) {
		var total int64
		window := max(sz.Subscribers-sz.SendsPerCampaign, 1)
		for i, c := range campaigns {
			// Each campaign to its own window of the subscribers, spread over all of them.
			from := first + (int64(i)*sz.SendsPerCampaign*7)%window
			n, err := q.LargeSendsInsert(ctx, harnessstore.LargeSendsInsertParams{FirstSubscriberID: from, N: sz.SendsPerCampaign, AccountID: accountID, CampaignID: c})
			if err != nil {
				return total, err
			}
			total += n
		}
		return total, nil
	}); err != nil {
		return err
	}
	if err := step("report counters", func() (int64, error) { return q.LargeCampaignCountsInsert(ctx, accountID) }); err != nil {
		return err
	}
	if err := step("suppressions", func() (int64, error) { return q.LargeSuppressionsInsert(ctx, accountID) }); err != nil {
		return err
	}
	if err := step("messages", func() (int64, error) {
		stream, err := q.LargeMessageStreamInsert(ctx, accountID)
		if err != nil {
			return 0, err
		}
		return q.LargeMessagesInsert(ctx, harnessstore.LargeMessagesInsertParams{StreamID: stream, AccountID: accountID, N: int32(sz.Messages)})
	}); err != nil {
		return err
	}
	if err := step("events", func() (int64, error) {
		return q.LargeEventsInsert(ctx, harnessstore.LargeEventsInsertParams{AccountID: accountID, N: int32(sz.Events), CampaignID: campaigns[len(campaigns)-1]})
	}); err != nil {
		return err
	}
	return step("statistics (ANALYZE)", func() (int64, error) { return 0, q.LargeAnalyze(ctx) })
}

// serve starts `sendonce serve --executor=false` of bin on a free loopback port
// against the database and waits until it is ready; stop ends it.
func serve(ctx context.Context, bin, dbURL string, stderr io.Writer) (base string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	secret := make([]byte, 16)
	rand.Read(secret)
	cmd := exec.Command(bin, "serve", "--executor=false")
	cmd.Env = append(os.Environ(),
		"SENDONCE_DATABASE_URL="+dbURL,
		"SENDONCE_ADDR="+addr,
		"SENDONCE_API_RATE_PER_SECOND=0",
		"SENDONCE_UNSUBSCRIBE_SECRET=large:"+hex.EncodeToString(secret),
		"SENDONCE_LOG_LEVEL=warn")
	cmd.Stdout, cmd.Stderr = io.Discard, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-exited //nolint:errcheck // the exit status of a process we stopped tells nothing
	}
	base = "http://" + addr
	deadline := time.Now().Add(time.Minute)
	for {
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base, stop, nil
			}
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, errors.New("largeaccount: sendonce serve was not ready within a minute")
		}
		select {
		case err := <-exited:
			return "", nil, fmt.Errorf("largeaccount: sendonce serve exited: %v", err)
		case <-ctx.Done():
			stop()
			return "", nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// call is one API request a dashboard page makes.
type call struct {
	page, method, path string
	body               any
}

// pageCalls are the calls each page makes (internal/dashboard/static), the ids in
// them found through the API: a campaign, a subscriber and a message from the
// middle of the first page, the first list.
func pageCalls(ctx context.Context, base, key string) ([]call, error) {
	var page struct {
		Data []map[string]any `json:"data"`
	}
	pick := func(path, field string) (string, error) {
		page.Data = nil
		if err := getJSON(ctx, base, key, path, &page); err != nil {
			return "", err
		}
		if len(page.Data) == 0 {
			return "", fmt.Errorf("largeaccount: %s is empty", path)
		}
		return fmt.Sprint(page.Data[len(page.Data)/2][field]), nil
	}
	campaignID, err := pick("/v1/campaigns?order=newest&limit=50&status=sent", "id")
	if err != nil {
		return nil, err
	}
	subscriberID, err := pick("/v1/subscribers?limit=50&email=user5", "id")
	if err != nil {
		return nil, err
	}
	email, _ := pick("/v1/subscribers?limit=50&email=user5", "email")
	listID, err := pick("/v1/lists?limit=1", "id")
	if err != nil {
		return nil, err
	}
	messageID, err := pick("/v1/messages?limit=50&order=newest", "id")
	if err != nil {
		return nil, err
	}
	lid, _ := json.Number(listID).Int64()
	preview := func(status string) any {
		return map[string]any{"list_ids": []int64{lid}, "statuses": []string{status}}
	}
	segmentID, err := benchSegment(ctx, base, key, lid)
	if err != nil {
		return nil, err
	}
	c := "/v1/campaigns/" + campaignID
	g := "/v1/segments/" + segmentID
	return []call{
		{"overview", "GET", "/v1/campaigns?status=sending&limit=20", nil},
		{"overview", "GET", "/v1/campaigns?status=approved&limit=20", nil},
		{"overview", "GET", "/v1/campaigns?status=paused&limit=20", nil},
		{"overview", "GET", "/v1/events?type=subscriber.bounced,subscriber.complained,subscriber.unsubscribed&order=newest&limit=10", nil},
		{"overview", "GET", "/v1/senders", nil},
		{"campaigns", "GET", "/v1/campaigns?order=newest&limit=50", nil},
		{"campaigns", "GET", "/v1/campaigns?order=newest&limit=50&status=sent", nil},
		{"campaign", "GET", c, nil},
		{"campaign", "GET", c + "/stats", nil},
		{"campaign", "GET", c + "/timeline", nil},
		{"campaign", "GET", c + "/sends?limit=100", nil},
		{"campaign", "GET", c + "/sends?limit=100&status=failed", nil},
		{"campaign", "GET", c + "/sends?limit=100&email=" + url.QueryEscape(email), nil},
		{"campaign", "GET", c + "/events", nil},
		{"campaign", "GET", c + "/clicks", nil},
		{"new campaign", "POST", "/v1/segments/preview (list, confirmed)", preview("confirmed")},
		{"new campaign", "POST", "/v1/segments/preview (list, pending)", preview("pending")},
		{"new campaign", "POST", "/v1/segments/preview (list, unsubscribed)", preview("unsubscribed")},
		{"new campaign", "GET", "/v1/templates?limit=200", nil},
		{"new campaign", "GET", "/v1/segments?limit=200", nil},
		// The segments page's live count of its form (confirmed, any list) and its list.
		{"segments", "POST", "/v1/segments/preview (confirmed)", map[string]any{"statuses": []string{"confirmed"}}},
		{"segments", "GET", "/v1/segments?limit=50", nil},
		{"segment", "GET", g, nil},
		{"segment", "GET", g + "/subscribers/count", nil},
		{"segment", "GET", g + "/subscribers?limit=50", nil},
		{"subscribers", "GET", "/v1/subscribers?limit=50", nil},
		{"subscribers", "GET", "/v1/subscribers/count", nil},
		{"subscribers", "GET", "/v1/subscribers?limit=50&email=user12345", nil},
		{"subscribers", "GET", "/v1/subscribers/count?email=user12345", nil},
		{"subscribers", "GET", "/v1/lists?limit=200", nil},
		{"subscriber", "GET", "/v1/subscribers/" + subscriberID, nil},
		{"subscriber", "GET", "/v1/subscribers/" + subscriberID + "/lists", nil},
		// An unsubscribed one's suppression (every twentieth subscriber is unsubscribed).
		{"subscriber", "GET", "/v1/suppressions/user20%40example20.com", nil},
		{"messages", "GET", "/v1/messages?limit=50&order=newest", nil},
		{"messages", "GET", "/v1/messages?limit=50&order=newest&to=user77%40example27.com", nil},
		{"messages", "GET", "/v1/messages/" + messageID, nil},
		{"lists", "GET", "/v1/lists?limit=50", nil},
		{"list", "GET", "/v1/lists/" + listID, nil},
		{"list", "GET", "/v1/subscribers?limit=50&list_id=" + listID + "&membership=subscribed", nil},
		{"suppressions", "GET", "/v1/suppressions?limit=50", nil},
		{"events", "GET", "/v1/events?limit=50&order=newest", nil},
		{"events", "GET", "/v1/events?limit=50", nil},
	}, nil
}

// benchSegmentName names the segment the bench times (the first list's confirmed
// members), made through the API once per database.
const benchSegmentName = "largeaccount: first list, confirmed"

// benchSegment returns the id of the bench's segment of list lid, creating it
// when the account does not have it yet.
func benchSegment(ctx context.Context, base, key string, lid int64) (string, error) {
	var page struct {
		Data []struct {
			ID   json.Number `json:"id"`
			Name string      `json:"name"`
		} `json:"data"`
	}
	if err := getJSON(ctx, base, key, "/v1/segments?limit=50&name="+url.QueryEscape(benchSegmentName), &page); err != nil {
		return "", err
	}
	for _, g := range page.Data {
		if g.Name == benchSegmentName {
			return g.ID.String(), nil
		}
	}
	b, err := json.Marshal(map[string]any{"name": benchSegmentName, "list_ids": []int64{lid}, "statuses": []string{"confirmed"}})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/segments", strings.NewReader(string(b)))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var created struct {
		ID json.Number `json:"id"`
	}
	if resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("largeaccount: POST /v1/segments answered %d", resp.StatusCode)
	}
	d := json.NewDecoder(resp.Body)
	d.UseNumber()
	if err := d.Decode(&created); err != nil {
		return "", err
	}
	return created.ID.String(), nil
}

// timeCall asks c reps times, one after another (after one call not measured, that
// warms the connection), and returns each answer's time in milliseconds and, when
// some were not 2xx, how many and with which status (a preview stopped by its
// statement timeout answers 422), said beside the figures rather than hidden.
func timeCall(ctx context.Context, base, key string, c call, reps int) ([]float64, string, error) {
	path, _, _ := strings.Cut(c.path, " (")
	var out []float64
	var refused, status int
	for i := 0; i <= reps; i++ {
		var body io.Reader
		if c.body != nil {
			b, err := json.Marshal(c.body)
			if err != nil {
				return nil, "", err
			}
			body = strings.NewReader(string(b))
		}
		req, err := http.NewRequestWithContext(ctx, c.method, base+path, body)
		if err != nil {
			return nil, "", err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, "", err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		if err != nil {
			return nil, "", err
		}
		if i == 0 {
			continue
		}
		if resp.StatusCode/100 != 2 {
			refused++
			status = resp.StatusCode
		}
		out = append(out, float64(took.Microseconds())/1000)
	}
	if refused > 0 {
		return out, fmt.Sprintf("%d of %d answered %d", refused, reps, status), nil
	}
	return out, "", nil
}

// pct is the p-th percentile of d (nearest rank).
func pct(d []float64, p int) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	i := (p*len(s)+99)/100 - 1
	return s[max(0, min(i, len(s)-1))]
}

func getJSON(ctx context.Context, base, key, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("largeaccount: GET %s answered %d", path, resp.StatusCode)
	}
	d := json.NewDecoder(resp.Body)
	d.UseNumber()
	return d.Decode(v)
}
