#!/bin/bash
# The HOT-design experiment of docs/performance.md ("A design without status in any index, measured in SQL").
# Usage: docs/experiments/hot/run.sh PORT [N] [ROUNDS]   (VARIANTS="a b c d" to choose)
# Needs a PostgreSQL on 127.0.0.1:PORT (user postgres, trust) on this host: the backend's CPU is read from /proc.
# Prints per variant and round: backend CPU-seconds per 1,000 messages, WAL bytes per message, updates and HOT updates.
set -euo pipefail
P=${1:?usage: run.sh PORT [N] [ROUNDS]}; N=${2:-20000}; R=${3:-3}; B=$((N/50))
dir=$(cd "$(dirname "$0")" && pwd)
PSQL="psql -h 127.0.0.1 -p $P -U postgres -qAtX"
$PSQL -q -c "SET client_min_messages = warning" -f "$dir/schema.sql" >/dev/null
for round in $(seq 1 "$R"); do for v in ${VARIANTS:-a b}; do
  $PSQL -c "CALL fill($N)" -c "VACUUM ANALYZE sa, sb, cur, lb" -c "CHECKPOINT" >/dev/null
  out=$(PGAPPNAME=hotexp $PSQL <<SQL
SELECT pg_current_wal_insert_lsn() AS l0 \gset
\! awk '{print \$14+\$15}' /proc/\$(psql -h 127.0.0.1 -p $P -U postgres -qAtX -c "select pid from pg_stat_activity where application_name='hotexp' and pid <> pg_backend_pid()")/stat
CALL run_$v($B);
\! awk '{print \$14+\$15}' /proc/\$(psql -h 127.0.0.1 -p $P -U postgres -qAtX -c "select pid from pg_stat_activity where application_name='hotexp' and pid <> pg_backend_pid()")/stat
SELECT round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'l0') / $N);
SELECT n_tup_upd || ' ' || n_tup_hot_upd FROM pg_stat_xact_user_tables WHERE relname = (CASE '$v' WHEN 'c' THEN 'sa' WHEN 'd' THEN 'sb' ELSE 's$v' END);
SQL
)
  set -- $out
  echo "variant=$v round=$round cpu_s_per_1k=$(awk "BEGIN{printf \"%.4f\", ($2-$1)/100/($N/1000)}") wal_bytes_per_msg=$3 updates=$4 hot=$5"
done; done
