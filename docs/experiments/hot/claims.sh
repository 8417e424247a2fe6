#!/bin/bash
# Claims of one campaign from many connections at once (docs/performance.md, "The send path's row design: five
# candidates"): today's claim (claim_a.sql: FOR UPDATE SKIP LOCKED, a new row version per claimed row, each
# connection's own cursor as the executor's after_id) against G's (claim_g.sql: the campaign's cursor row taken in
# turn, the next 50 queued ids read from the index, one lease row per batch, no row of sends written).
# Usage: docs/experiments/hot/claims.sh PORT [ROWS] [SECONDS]   (after run.sh has loaded schema.sql)
# Prints claims per second and mean latency per variant and number of connections, then checks that no id was
# leased twice by G's claims.
set -euo pipefail
P=${1:?usage: claims.sh PORT [ROWS] [SECONDS]}; N=${2:-4000000}; T=${3:-5}
dir=$(cd "$(dirname "$0")" && pwd)
PSQL="psql -h 127.0.0.1 -p $P -U postgres -qAtX"
PGBENCH=${PGBENCH:-$(ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | tail -1)}
for v in a g; do
  $PSQL -c "TRUNCATE sa, sb, sf, sg, se, q, ev, evb, pm, lb, cur" -c "CALL fill_$v($N)" -c "VACUUM ANALYZE s$v, cur, lb" >/dev/null
  for c in 1 4 16 32; do
    out=$("$PGBENCH" -h 127.0.0.1 -p "$P" -U postgres -n -M prepared -D after=0 -c "$c" -j 2 -T "$T" -f "$dir/claim_$v.sql" postgres 2>&1)
    echo "variant=$v clients=$c claims_per_s=$(echo "$out" | awk '/^tps/{printf "%.0f", $3}') latency_ms=$(echo "$out" | awk '/latency average/{print $4}')"
  done
done
echo "g: ids leased twice: $($PSQL -c "SELECT count(*) FROM (SELECT x FROM lb, unnest(ids) x GROUP BY x HAVING count(*) > 1) d")"
