-- A list's subscribed members in subscriber order, index-only: the segment preview,
-- a segment's members and member count with lists (SegmentPreviewCountInLists,
-- SegmentPreviewSampleInLists) start from these entries and read only the lists'
-- subscribers, where the predicate's per-subscriber list test read every subscriber
-- of the account; a list's members page (SubscriberList with list_id) merges them
-- with the subscribers' id order. Partial: pending and unsubscribed memberships are
-- not in it. Its write cost (one more index entry for each subscribed membership
-- written, and for a status change to or from subscribed) is measured in
-- docs/experiments/list-members-subscribed-index.

-- +goose Up
CREATE INDEX list_members_subscribed_idx ON list_members (account_id, list_id, subscriber_id) WHERE status = 'subscribed';

-- +goose Down
DROP INDEX list_members_subscribed_idx;
