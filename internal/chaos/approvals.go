package chaos

import (
	"bytes"
	"context"
	cryptorand "crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sendonce/sendonce/internal/account"
)

// runApprovalsChaos is `sendonce-harness chaos -approvals`: the audit log under
// kill -9. An API process (`serve --executor=false`, the real binary) serves
// concurrent clients approving N draft campaigns (one approval each, in order,
// plus a second approval of an earlier campaign now and then, which must be a
// 409 that records nothing) and is SIGKILLed at random moments while approvals
// are in flight, then restarted, K times. An approval cut by the kill is not
// retried: whether it committed is what the run finds out. At the end it checks,
// for every campaign, through GET /v1/audit-log and the database:
//
//   - approved (or any later status) ⇔ exactly one campaign.approve audit entry and
//     exactly one campaign.approved event; a campaign still draft has neither;
//   - every approval answered 200 is of an approved campaign;
//
// and prints
//
//	chaos-approvals: campaigns=N approved=A draft=D kills=K requests=R cut=C answered_200=O conflicts_409=X
//
// It fails (exit 1) on any mismatch, and when no approval was in flight at any
// kill (the run would then prove nothing).
func runApprovalsChaos(ctx context.Context, bin string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("chaos -approvals", flag.ContinueOnError)
	n := fs.Int("campaigns", 400, "draft campaigns to approve")
	kills := fs.Int("kills", 4, "SIGKILLs of the API process while approvals are in flight")
	clients := fs.Int("clients", 8, "concurrent clients sending approvals")
	verbose := fs.Bool("v", false, "show the service's log (info level)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n < 1 || *kills < 1 || *clients < 1 {
		return errors.New("chaos -approvals: -campaigns, -kills and -clients must be at least 1")
	}
	db, err := startChaosDB(ctx)
	if err != nil {
		return err
	}
	defer db.close()
	acct, token, err := account.NewService(db.pool).Create(ctx, "chaos-approvals")
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	level, logTo := "warn", io.Discard
	if *verbose {
		level, logTo = "info", stderr
	}
	env := []string{"SENDONCE_DATABASE_URL=" + db.url, "SENDONCE_ADDR=" + addr, "SENDONCE_PROVIDER=log",
		"SENDONCE_API_RATE_PER_SECOND=0", "SENDONCE_DB_MAX_CONNS=8", "SENDONCE_LOG_LEVEL=" + level,
		"SENDONCE_UNSUBSCRIBE_SECRET=chaos:" + cryptorand.Text()}
	c := &messagesClient{base: "http://" + addr, token: token, http: &http.Client{Timeout: 10 * time.Second}}
	startAPI := func() (*exec.Cmd, error) {
		api, err := startProcess(bin, env, logTo, "serve", "--executor=false")
		if err != nil {
			return nil, err
		}
		return api, c.waitReady(ctx, time.Minute)
	}
	api, err := startAPI()
	if err != nil {
		return err
	}
	defer func() { _ = api.Process.Kill(); _ = api.Wait() }()

	// The drafts, through the API (retried under their Idempotency-Key until answered).
	ids := make([]int64, *n)
	for i := range ids {
		status, _, body, err := c.do(ctx, http.MethodPost, "/v1/campaigns", "draft-"+strconv.Itoa(i), map[string]any{
			"name": "chaos " + strconv.Itoa(i), "from_email": "news@example.com", "subject": "Hi", "text_template": "Hello"})
		if err != nil {
			return err
		}
		var created struct{ ID int64 }
		if status != http.StatusCreated || json.Unmarshal(body, &created) != nil {
			return fmt.Errorf("chaos -approvals: draft %d: %d %s", i, status, body)
		}
		ids[i] = created.ID
	}

	// Paced so the approvals spread over every generation (about half a second
	// each), and each kill finds some in flight.
	rate := float64(*n) / (float64(*kills+1) * 0.5)
	a := &approver{c: c, ids: ids, later: time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339),
		ok: map[int64]bool{}, pause: time.Duration(float64(*clients) / rate * float64(time.Second))}
	start := time.Now()
	made := 0 // SIGKILLs made
	for k := 0; ; k++ {
		genCtx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for range *clients {
			wg.Add(1)
			go func() { defer wg.Done(); a.run(genCtx) }()
		}
		// Let approvals flow, then kill at a random moment while they do.
		before := a.answered.Load()
		for a.answered.Load() == before && ctx.Err() == nil && a.next.Load() < int64(len(ids)) {
			time.Sleep(5 * time.Millisecond)
		}
		sleepCtx(ctx, time.Duration(100+rand.Int64N(400))*time.Millisecond)
		// Kill while an approval is in the process's hands: wait (a bounded while)
		// until a client has one under way, so the kill cuts it rather than land
		// between two requests (on a loaded machine the gaps are most of the time).
		for deadline := time.Now().Add(2 * time.Second); a.inFlight.Load() == 0 && time.Now().Before(deadline) &&
			ctx.Err() == nil && a.next.Load() < int64(len(ids)); {
			time.Sleep(200 * time.Microsecond)
		}
		// The planned kills done, the run ends; unless no kill has cut an approval
		// yet, when up to ten more are made (a run that cut none proves nothing).
		if k >= *kills && (a.cut.Load() > 0 || k >= *kills+10 || a.next.Load() >= int64(len(ids))) {
			stop()
			wg.Wait()
			_ = api.Process.Signal(syscall.SIGTERM)
			if err := api.Wait(); err != nil {
				return fmt.Errorf("chaos -approvals: the last API process did not exit cleanly on SIGTERM: %w", err)
			}
			break
		}
		made++
		_ = api.Process.Kill() // SIGKILL, approvals in flight
		_ = api.Wait()
		stop()
		wg.Wait()
		fmt.Fprintf(stderr, "chaos-approvals: kill %d at %s, approvals sent %d, cut so far %d\n", k+1,
			time.Since(start).Round(time.Millisecond), a.next.Load(), a.cut.Load())
		if api, err = startAPI(); err != nil {
			return err
		}
	}
	// The last process has stopped; one more serves the audit log's reading.
	if api, err = startAPI(); err != nil {
		return err
	}
	entries, err := c.approvalEntries(ctx)
	if err != nil {
		return err
	}
	rows, err := newQueries(db.pool).ChaosApprovalRecords(ctx, acct.ID)
	if err != nil {
		return err
	}
	approved, draft := 0, 0
	var bad []string
	for _, r := range rows {
		isDraft := r.Status == "draft"
		want := int64(1)
		if isDraft {
			want, draft = 0, draft+1
		} else {
			approved++
		}
		if entries[r.ID] != want || r.AuditEntries != want || r.ApprovedEvents != want {
			bad = append(bad, fmt.Sprintf("campaign %d %s: %d audit entries listed, %d stored, %d campaign.approved events (want %d)",
				r.ID, r.Status, entries[r.ID], r.AuditEntries, r.ApprovedEvents, want))
		}
		if isDraft && a.ok[r.ID] {
			bad = append(bad, fmt.Sprintf("campaign %d: its approval was answered 200 but it is draft", r.ID))
		}
	}
	fmt.Fprintf(stdout, "chaos-approvals: campaigns=%d approved=%d draft=%d kills=%d requests=%d cut=%d answered_200=%d conflicts_409=%d\n",
		len(rows), approved, draft, made, a.requests.Load(), a.cut.Load(), len(a.ok), a.conflicts.Load())
	if len(bad) > 0 {
		return fmt.Errorf("chaos -approvals: the audit log does not show exactly the approvals that committed:\n%s",
			errors.Join(errorsOf(bad)...))
	}
	if a.cut.Load() == 0 {
		return errors.New("chaos -approvals: no approval was in flight at a kill; raise -clients or -campaigns")
	}
	return nil
}

func errorsOf(lines []string) []error {
	out := make([]error, len(lines))
	for i, l := range lines {
		out[i] = errors.New(l)
	}
	return out
}

// approver is the clients' shared state: the next campaign to approve and what
// the answers were.
type approver struct {
	c     *messagesClient
	ids   []int64
	later string
	pause time.Duration // between two requests of a client
	next  atomic.Int64

	requests, answered, cut, conflicts atomic.Int64
	// inFlight is the approvals sent and not yet answered.
	inFlight atomic.Int64

	mu sync.Mutex
	ok map[int64]bool
}

// run approves the next campaign until ctx ends or none is left; every fifth
// request approves an earlier campaign again instead.
func (a *approver) run(ctx context.Context) {
	for ctx.Err() == nil {
		var id int64
		if i := a.next.Load(); i > 0 && rand.IntN(5) == 0 {
			id = a.ids[rand.Int64N(min(i, int64(len(a.ids))))]
		} else {
			i := a.next.Add(1) - 1
			if i >= int64(len(a.ids)) {
				return
			}
			id = a.ids[i]
		}
		a.requests.Add(1)
		a.inFlight.Add(1)
		status, err := a.approve(ctx, id)
		a.inFlight.Add(-1)
		switch {
		case err != nil:
			a.cut.Add(1) // the process died under it (or the run moved on): not retried
		case status == http.StatusOK:
			a.answered.Add(1)
			a.mu.Lock()
			a.ok[id] = true
			a.mu.Unlock()
		case status == http.StatusConflict:
			a.answered.Add(1)
			a.conflicts.Add(1)
		default:
			a.answered.Add(1)
		}
		sleepCtx(ctx, a.pause)
	}
}

// approve sends one approval, once.
func (a *approver) approve(ctx context.Context, id int64) (int, error) {
	body, _ := json.Marshal(map[string]string{"scheduled_for": a.later})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.c.base+"/v1/campaigns/"+strconv.FormatInt(id, 10)+"/approve",
		bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+a.c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode >= 500 {
		return 0, fmt.Errorf("approve %d: %d", id, resp.StatusCode)
	}
	return resp.StatusCode, nil
}

// approvalEntries counts the campaign.approve entries of GET /v1/audit-log per
// campaign, every page.
func (c *messagesClient) approvalEntries(ctx context.Context) (map[int64]int64, error) {
	out := map[int64]int64{}
	cursor := ""
	for {
		path := "/v1/audit-log?action=campaign.approve&limit=100"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		status, _, body, err := c.do(ctx, http.MethodGet, path, "", nil)
		if err != nil {
			return nil, err
		}
		var page struct {
			Data []struct {
				TargetID *string `json:"target_id"`
			} `json:"data"`
			NextCursor *string `json:"next_cursor"`
		}
		if status != http.StatusOK || json.Unmarshal(body, &page) != nil {
			return nil, fmt.Errorf("GET %s: %d %s", path, status, body)
		}
		for _, e := range page.Data {
			if e.TargetID == nil {
				return nil, errors.New("a campaign.approve entry without a target")
			}
			id, err := strconv.ParseInt(*e.TargetID, 10, 64)
			if err != nil {
				return nil, err
			}
			out[id]++
		}
		if page.NextCursor == nil {
			return out, nil
		}
		cursor = *page.NextCursor
	}
}
