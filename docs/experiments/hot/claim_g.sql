WITH c AS (SELECT next_id FROM cur WHERE campaign_id = 1 FOR UPDATE),
p AS (SELECT s.id FROM sg s WHERE s.campaign_id = 1 AND s.status = 'queued' AND s.id > (SELECT c.next_id FROM c) ORDER BY s.id LIMIT 50),
u AS (UPDATE cur SET next_id = (SELECT max(id) FROM p) WHERE campaign_id = 1 RETURNING next_id)
INSERT INTO lb (campaign_id, lease_until, ids) SELECT 1, now() + interval '2 minutes', (SELECT array_agg(id ORDER BY id) FROM p) FROM u;
