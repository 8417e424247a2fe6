#!/bin/bash
# The HOT-design experiment of docs/performance.md ("A design without status in any index, measured in SQL", and
# "The send path's row design: five candidates"). Usage: docs/experiments/hot/run.sh PORT [N] [ROUNDS]
# (VARIANTS="a2 b2 e f g" to choose, FF=50 for E's and G's fillfactor; the variants are described in schema.sql).
# Needs a PostgreSQL on 127.0.0.1:PORT (user postgres, trust) on this host: the backend's CPU is read from /proc.
# Prints per variant and round: the build's and the send's (claims and acknowledgements) backend CPU-seconds per
# 1,000 messages and WAL bytes per message, and the send's updates and HOT updates of the variant's table.
set -euo pipefail
P=${1:?usage: run.sh PORT [N] [ROUNDS]}; N=${2:-20000}; R=${3:-3}; B=$((N/50))
dir=$(cd "$(dirname "$0")" && pwd)
PSQL="psql -h 127.0.0.1 -p $P -U postgres -qAtX"
$PSQL -q -c "SET client_min_messages = warning" -f "$dir/schema.sql" >/dev/null
# FF: the fillfactor of E's and G's tables (70 by default), whose one update per message must find room on its page.
if [ -n "${FF:-}" ]; then $PSQL -c "ALTER TABLE sg SET (fillfactor = $FF)" -c "ALTER TABLE se SET (fillfactor = $FF)"; fi
cpu="awk '{print \$14+\$15}' /proc/\$(psql -h 127.0.0.1 -p $P -U postgres -qAtX -c \"select pid from pg_stat_activity where application_name='hotexp' and pid <> pg_backend_pid()\")/stat"
for round in $(seq 1 "$R"); do for v in ${VARIANTS:-a b}; do
  case $v in a|c|a2) fill=a; tbl=sa ;; b|d|b2) fill=b; tbl=sb ;; af) fill=a; tbl=sa ;; gf|gn) fill=g; tbl=sg ;; *) fill=$v; tbl=s$v ;; esac
  $PSQL -c "TRUNCATE sa, sb, sf, sg, se, q, ev, evb, pm, lb, cur" -c "CALL fill_around($N)" -c "VACUUM ANALYZE" -c "CHECKPOINT" >/dev/null
  upd="SELECT n_tup_upd || ' ' || n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = '$tbl'"
  before=$($PSQL -c "$upd")
  out=$(PGAPPNAME=hotexp $PSQL <<SQL
SELECT pg_current_wal_insert_lsn() AS l0 \gset
\! $cpu
CALL fill_$fill($N);
\! $cpu
SELECT round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'l0') / $N);
VACUUM ANALYZE $tbl, q, cur, lb;
CHECKPOINT;
SELECT pg_current_wal_insert_lsn() AS l1 \gset
\! $cpu
CALL run_$v($B);
\! $cpu
SELECT round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'l1') / $N);
SQL
)
  sleep 1  # the backend's statistics reach pg_stat_user_tables when it ends
  set -- $out $before $($PSQL -c "$upd")
  echo "variant=$v round=$round build_cpu_s_per_1k=$(awk "BEGIN{printf \"%.4f\", ($2-$1)/100/($N/1000)}") build_wal_bytes_per_msg=$3" \
    "send_cpu_s_per_1k=$(awk "BEGIN{printf \"%.4f\", ($5-$4)/100/($N/1000)}") send_wal_bytes_per_msg=$6 updates=$(($9-$7)) hot=$((${10}-$8))"
done; done
