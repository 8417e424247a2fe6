#!/usr/bin/env bash
# Runs the Postman collection with newman against a real sendonce serve: a throwaway
# PostgreSQL cluster (`sendonce-harness testdb`), a fresh account, the log provider, a free port.
# Usage: api/postman/run.sh BINARY HARNESS   (make postman builds both binaries and calls this)
# Every step is bounded, so a stuck service or newman cannot hang CI.
set -euo pipefail
bin=$(realpath "${1:?usage: run.sh path/to/sendonce path/to/sendonce-harness}")
dir=$(cd "$(dirname "$0")" && pwd)

if [ -z "${TEST_DATABASE_URL:-}" ]; then
  harness=$(realpath "${2:?usage: run.sh path/to/sendonce path/to/sendonce-harness}")
  # Re-run under a throwaway cluster that testdb removes when this script ends.
  exec timeout -k 10 900 "$harness" testdb -- "$0" "$bin"
fi
command -v newman >/dev/null || { echo "newman not found: npm install -g newman" >&2; exit 1; }

work=$(mktemp -d)
log="$work/serve.log"
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

export SENDONCE_DATABASE_URL="$TEST_DATABASE_URL"
export SENDONCE_ADDR=127.0.0.1:0
export SENDONCE_PROVIDER=log
export SENDONCE_LOG_FORMAT=text
export SENDONCE_LOG_LEVEL=warn
export SENDONCE_API_RATE_PER_SECOND=0
export SENDONCE_UNSUBSCRIBE_SECRET="k1:$(head -c 32 /dev/urandom | od -An -v -tx1 | tr -d ' \n')"
# Single sign-on client secrets are sealed with this key ring; the operator folder needs the operator
# API on: the server gets the key's hash, newman the key.
export SENDONCE_SECRETS_KEY="k1:$(head -c 32 /dev/urandom | base64)"
opkeys=$(timeout 60 "$bin" operator key)
operator_key=$(printf '%s\n' "$opkeys" | sed -n 's/^SENDONCE_OPERATOR_KEY=//p')
export SENDONCE_OPERATOR_KEY_HASH=$(printf '%s\n' "$opkeys" | sed -n 's/^SENDONCE_OPERATOR_KEY_HASH=//p')
[ -n "$operator_key" ] && [ -n "$SENDONCE_OPERATOR_KEY_HASH" ] || { echo "could not make an operator key" >&2; exit 1; }

timeout 120 "$bin" migrate >/dev/null
key=$(timeout 60 "$bin" account create postman | sed -n 's/^SENDONCE_API_KEY=//p')
[ -n "$key" ] || { echo "could not create an account" >&2; exit 1; }

SENDONCE_LOG_LEVEL=info "$bin" serve >"$log" 2>&1 &
pid=$!
addr=""
for _ in $(seq 1 600); do   # up to 60 s
  addr=$(sed -n 's/.*api listening.*addr=\([0-9.:]*\).*/\1/p' "$log" | head -1)
  [ -n "$addr" ] && curl -fsS -m 2 "http://$addr/readyz" >/dev/null 2>&1 && break
  addr=""
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "sendonce serve exited" >&2; exit 1; }
  sleep 0.1
done
[ -n "$addr" ] || { cat "$log" >&2; echo "sendonce serve not ready within 60 s" >&2; exit 1; }
echo "postman: sendonce serve on http://$addr (pid $pid)"

# Uploads read their files (fixtures/) from this directory, and from nowhere else.
timeout -k 10 300 newman run "$dir/sendonce.postman_collection.json" \
  -e "$dir/sendonce.postman_environment.json" \
  --env-var "baseUrl=http://$addr" --env-var "apiKey=$key" --env-var "operatorKey=$operator_key" \
  --timeout-request 30000 --timeout-script 30000 --timeout 240000 \
  --working-dir "$dir" --color off --disable-unicode --no-insecure-file-read
