-- The executor now rewrites a sequence step's literal links into click redirects,
-- which answer with the URLs its step campaign stored when it was made. Step
-- campaigns made before they stored them have track_clicks on (the column's
-- default) and no stored links: their redirects would find no URL. Those with a
-- literal http(s) link keep sending their links as written, as they always did
-- (an edit that stores links does not turn tracking back on; docs/sequences.md).

-- +goose Up
UPDATE campaigns c SET track_clicks = false
WHERE c.kind = 'sequence' AND c.track_clicks
  AND c.html_template ~* 'href\s*=\s*["'']?\s*https?://'
  AND NOT EXISTS (SELECT 1 FROM tracked_links l WHERE l.account_id = c.account_id AND l.campaign_id = c.id);

-- +goose Down
-- Nothing to undo: the step campaigns sent untracked before, and still do.
SELECT 1;
