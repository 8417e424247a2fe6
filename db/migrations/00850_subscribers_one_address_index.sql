-- One index on a subscriber's address where there were two. UNIQUE (account_id,
-- email_lower) kept the key and served equality; subscribers_email_prefix_idx, the
-- same columns with text_pattern_ops, served the prefix search (LIKE 'abc%'), which a
-- default-opclass index cannot under a non-C collation. A text_pattern_ops b-tree
-- serves equality as well (its operator family has =, and = is the same under every
-- deterministic collation), so the unique index takes that operator class and the
-- other goes: every subscriber written maintains one address entry less (an import
-- row's index work falls from five entries to four; docs/performance.md).
-- ON CONFLICT (account_id, email_lower) names no operator class, so it infers this
-- index, in this release and in the one before it during a rolling upgrade. No
-- query orders subscribers by email_lower, which this index could not serve under a
-- non-C collation. The build holds a SHARE lock on subscribers (writes wait, reads
-- do not) as 00820's did on list_members: measured on 2,000,000 subscribers in
-- docs/performance.md. Dropping the old constraint and index then takes an ACCESS
-- EXCLUSIVE lock to the commit, which must wait for every running reader of
-- subscribers (an export streams for minutes) while every later reader and writer
-- queues behind it; lock_timeout makes the migration fail after 10 s instead, all of
-- it rolled back, to be run again (`sendonce migrate`, or serve's next start).

-- +goose Up
SET LOCAL lock_timeout = '10s';
CREATE UNIQUE INDEX subscribers_account_email_key ON subscribers (account_id, email_lower text_pattern_ops);
ALTER TABLE subscribers DROP CONSTRAINT subscribers_account_id_email_lower_key;
DROP INDEX subscribers_email_prefix_idx;

-- +goose Down
ALTER TABLE subscribers ADD CONSTRAINT subscribers_account_id_email_lower_key UNIQUE (account_id, email_lower);
CREATE INDEX subscribers_email_prefix_idx ON subscribers (account_id, email_lower text_pattern_ops);
DROP INDEX subscribers_account_email_key;
