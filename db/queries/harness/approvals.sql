-- Queries of `sendonce-harness chaos -approvals` only: what the approvals under
-- kill -9 left, per campaign of the account.

-- name: ChaosApprovalRecords :many
-- Each campaign of the account with its status, how many campaign.approve audit
-- entries and how many campaign.approved events name it.
SELECT c.id, c.status,
       (SELECT count(*) FROM audit_log a
        WHERE a.account_id = c.account_id AND a.action = 'campaign.approve'
          AND a.target_type = 'campaign' AND a.target_id = c.id::text)::bigint AS audit_entries,
       (SELECT count(*) FROM events e
        WHERE e.account_id = c.account_id AND e.type = 'campaign.approved'
          AND e.data ->> 'campaign_id' = c.id::text)::bigint AS approved_events
FROM campaigns c
WHERE c.account_id = @account_id AND c.kind = 'campaign'
ORDER BY c.id;
