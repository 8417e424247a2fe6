WITH picked AS (SELECT id FROM sa WHERE campaign_id = 1 AND status = 'queued' AND id > :after ORDER BY id LIMIT 50 FOR UPDATE SKIP LOCKED),
c AS (UPDATE sa s SET status = 'sending', lease_until = now() + interval '2 minutes', attempts = s.attempts + 1,
       executor_id = 7, route = 'default', updated_at = now() FROM picked WHERE s.id = picked.id RETURNING s.id)
SELECT coalesce(max(id), :after) AS after FROM c \gset
