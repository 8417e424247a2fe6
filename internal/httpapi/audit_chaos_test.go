package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// TestAuditUnderKilledApprovals: approvals whose database session is killed
// between the request's work and its commit (a deferred trigger terminates the
// backend at commit time, as a kill -9 of the server between its statements and
// COMMIT leaves the transaction uncommitted) leave neither an approved campaign
// nor an audit entry; the others leave both. GET /v1/audit-log then shows
// exactly the approvals that committed: approved ⇔ one campaign.approve entry.
func TestAuditUnderKilledApprovals(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	// Kill at commit the sessions that write the approval of an odd campaign.
	_, err := e.pool.Exec(ctx, `
		CREATE FUNCTION chaos_kill_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.action = 'campaign.approve' AND NEW.target_id::bigint % 2 = 1 THEN
				PERFORM pg_terminate_backend(pg_backend_pid());
			END IF;
			RETURN NULL;
		END $$;
		CREATE CONSTRAINT TRIGGER chaos_kill AFTER INSERT ON audit_log
			DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION chaos_kill_at_commit();`)
	require.NoError(t, err)

	draft := map[string]any{"name": "c", "from_email": "news@example.com", "subject": "Hi", "text_template": "Hello"}
	later := time.Now().Add(24 * time.Hour)
	var ids []int64
	for range 8 {
		res := e.do(e.keyA, http.MethodPost, "/v1/campaigns", draft)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
		ids = append(ids, decodeAs[api.Campaign](t, res).Id)
	}
	for _, id := range ids {
		res := e.do(e.keyA, http.MethodPost, fmt.Sprint("/v1/campaigns/", id, "/approve"), map[string]any{"scheduled_for": later})
		if id%2 == 1 {
			require.GreaterOrEqual(t, res.Status, 500, "killed at commit: %s", res.Body)
		} else {
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		}
	}

	res := e.do(e.keyA, http.MethodGet, "/v1/audit-log?action=campaign.approve&limit=100", nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	entries := map[int64]int{}
	for _, a := range decodeAs[api.AuditEntryPage](t, res).Data {
		id, err := strconv.ParseInt(*a.TargetId, 10, 64)
		require.NoError(t, err)
		entries[id]++
	}
	approved := 0
	for _, id := range ids {
		res := e.do(e.keyA, http.MethodGet, fmt.Sprint("/v1/campaigns/", id), nil)
		require.Equal(t, http.StatusOK, res.Status)
		isApproved := decodeAs[api.Campaign](t, res).Status == "approved"
		if isApproved {
			approved++
			require.Equal(t, 1, entries[id], "campaign %d approved: one entry", id)
		} else {
			require.Zero(t, entries[id], "campaign %d not approved: no entry", id)
		}
	}
	require.Equal(t, 4, approved, "half were killed at commit")
	require.Len(t, entries, 4)
}
