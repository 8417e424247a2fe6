-- Each send row gets two new versions: the claim's (queued -> sending) and the
-- acknowledgement's (sending -> sent). Neither can be a HOT update: status is in
-- the predicates of the partial indexes, so every version enters the indexes
-- anyway. But on a full page (the default fillfactor 100, and a freshly built
-- campaign's pages are full) the new version also has to go to another page,
-- which costs PostgreSQL a lock record on the old tuple, a second page and a
-- full, uncompressed update record: 2.2 WAL lock records per claimed row instead
-- of the one the claim's FOR UPDATE needs (docs/performance.md, "What a message
-- costs PostgreSQL"). At 40 the build leaves room on each page for the claim's
-- versions of its rows, and mostly for the acknowledgement's once the claim's
-- old versions are pruned: 13 % less WAL per message, for a table about 40 %
-- larger. Only pages written from now on get the room; existing rows keep their
-- layout. SET (fillfactor) takes a SHARE UPDATE EXCLUSIVE lock: reads and writes
-- go on.

-- +goose Up
ALTER TABLE sends SET (fillfactor = 40);

-- +goose Down
ALTER TABLE sends RESET (fillfactor);
