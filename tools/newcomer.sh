#!/usr/bin/env bash
# The newcomer's five minutes, as CI runs them (.ci/run): from a fresh clone of this repository,
#   1. `make run` (its own data folder and a free port, as README "The two commands" says it starts),
#   2. the README's command-line block as written (only the export line's placeholders take the
#      printed URL and key, as TestREADMECLIBlock does against a test service),
#   3. a Go program on the Go SDK in a module of its own (`go get` of the SDK through a replace onto
#      the clone's client/: the SDK is not published to the module proxy from here),
#   4. sdk/typescript/examples/quickstart.ts compiled (strict) against the package as `npm pack`
#      makes it, installed into a project of its own, and run on Node,
#   5. `sendonce events forward` posting a live event to a receiver that verifies its signature with
#      the packed package's verifyWebhook.
# Every step must succeed; the script prints how long each took. It needs go, git, make, npm, node,
# curl and PostgreSQL's server binaries (as `make run` does).
#
#   tools/newcomer.sh            # clones the committed HEAD of this repository
#   NEWCOMER_KEEP=1 tools/newcomer.sh   # keeps the work folder (printed) for a look afterwards
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# A fresh clone is a new folder, and Go's build cache keys hold a package's folder unless -trimpath: built as
# `make build` builds (-trimpath, cgo off), the clone reuses what CI compiled for make build instead of compiling
# the service again. Nothing else changes (the binaries differ only in the paths they record).
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath" CGO_ENABLED=0
work=$(mktemp -d "${TMPDIR:-/tmp}/sendonce-newcomer-XXXXXX")
chmod 755 "$work" # as root, `make run`'s PostgreSQL runs as postgres and must enter the data folder
pids=()
cleanup() {
  local code=$?
  for pid in "${pids[@]}"; do
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do # each started under setsid: wait for its whole group (make run's PostgreSQL too)
    for _ in $(seq 1 600); do kill -0 -- "-$pid" 2>/dev/null || break; sleep 0.1; done
  done
  if [ "$code" -ne 0 ]; then
    for log in "$work"/*.log; do [ -f "$log" ] && { echo "---- $log (last 40 lines)"; tail -n 40 "$log"; }; done
  fi
  if [ -n "${NEWCOMER_KEEP:-}" ]; then echo "newcomer: kept $work"; else rm -rf "$work"; fi
  exit "$code"
}
trap cleanup EXIT

start=$SECONDS
step_start=$SECONDS
step() {
  echo "newcomer: $1 done in $((SECONDS - step_start)) s"
  step_start=$SECONDS
}

# wait_for FILE PATTERN SECONDS PID: until FILE has a line matching PATTERN, while PID lives.
wait_for() {
  for _ in $(seq 1 $(($3 * 10))); do
    grep -q -- "$2" "$1" 2>/dev/null && return 0
    kill -0 "$4" 2>/dev/null || { echo "newcomer: the process ended before '$2' appeared in $1"; return 1; }
    sleep 0.1
  done
  echo "newcomer: '$2' did not appear in $1 within $3 s"
  return 1
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on, below Linux's ephemeral range
# (32768-60999): a port in it could be taken as the local port of an outgoing connection (the
# service's own to its PostgreSQL) between this check and the bind (CI saw "address already in use").
free_port() {
  local port
  for _ in $(seq 1 50); do
    port=$((20000 + RANDOM % 12000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  return 1
}

# 1. A fresh clone, then `make run`.
git clone -q "$repo" "$work/sendonce"
cd "$work/sendonce"
step "git clone"

port=$(free_port)
SENDONCE_DATA_DIR="$work/data" SENDONCE_ADDR="127.0.0.1:$port" setsid make run >"$work/run.log" 2>&1 &
pids+=($!)
run_pid=$!
wait_for "$work/run.log" '^SENDONCE_API_KEY=so_' 300 "$run_pid"
URL="http://127.0.0.1:$port"
KEY=$(sed -n 's/^SENDONCE_API_KEY=//p' "$work/run.log" | head -n 1)
curl -fsS "$URL/readyz" >/dev/null
step "make run (ready on $URL)"

# 2. The README's command-line block, as written, in the clone.
awk '/^\*\*From the command line\.\*\*/ { found = 1 }
     found && /^```sh$/ { inblock = 1; next }
     inblock && /^```$/ { exit }
     inblock { print }' README.md >"$work/readme-cli.sh"
grep -q '^go build -o bin/sendonce ./cmd/sendonce$' "$work/readme-cli.sh" || { echo "newcomer: README's CLI block not found"; exit 1; }
export_line='export SENDONCE_URL=http://127.0.0.1:8080 SENDONCE_API_KEY=so_...   # from `make run`'
grep -qxF -- "$export_line" "$work/readme-cli.sh" || { echo "newcomer: README's CLI block lost its export line"; exit 1; }
awk -v line="$export_line" -v url="$URL" -v key="$KEY" \
  '$0 == line { print "export SENDONCE_URL=" url " SENDONCE_API_KEY=" key; next } { print }' \
  "$work/readme-cli.sh" >"$work/readme-cli.run.sh"
SENDONCE_CONFIG="$work/cli.json" bash -euo pipefail "$work/readme-cli.run.sh" 2>&1 | tee "$work/readme-cli.log"
grep -q 'imported examples/people.csv: 6 inserted, 0 updated, 0 rejected' "$work/readme-cli.log"
grep -q 'sent: 6 total: 6 sent, 0 queued, 0 sending, 0 failed' "$work/readme-cli.log"
step "README CLI block"

# 3. The Go SDK from a module of its own.
mkdir "$work/go-example"
cd "$work/go-example"
go mod init example.com/newcomer >/dev/null 2>&1
go mod edit -go=1.24 -replace "github.com/sendonce/sendonce/client=$work/sendonce/client"
cat >main.go <<'EOF'
// The Go SDK's README, as a program: create (or find) a subscriber, send a message once, count subscribers.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/sendonce/sendonce/client"
)

func main() {
	ctx := context.Background()
	c, err := client.New(client.Config{URL: os.Getenv("SENDONCE_URL"), APIKey: os.Getenv("SENDONCE_API_KEY")})
	if err != nil {
		log.Fatal(err)
	}
	sub, err := c.Subscribers.Create(ctx, &client.SubscriberCreate{Email: "go-newcomer@example.com", Name: client.Ptr("Go")})
	var e *client.Error
	if errors.As(err, &e) && e.Status == 409 {
		log.Fatal("go-newcomer@example.com exists already: the script runs on a fresh data folder")
	} else if err != nil {
		log.Fatal(err)
	}
	fmt.Println("go: subscriber", sub.Id, sub.Email)
	msg, err := c.Messages.Send(ctx, &client.MessageCreate{From: "shop@example.com", To: sub.Email,
		Subject: client.Ptr("Your receipt"), Text: client.Ptr("Thanks!")}, client.Key("go-newcomer-receipt"))
	if err != nil {
		log.Fatal(err)
	}
	again, err := c.Messages.Send(ctx, &client.MessageCreate{From: "shop@example.com", To: sub.Email,
		Subject: client.Ptr("Your receipt"), Text: client.Ptr("Thanks!")}, client.Key("go-newcomer-receipt"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("go: message", msg.Id, "sent once:", msg.Id == again.Id)
	n := 0
	for _, err := range c.Subscribers.Iter(ctx, client.ListSubscribersParams{}) {
		if err != nil {
			log.Fatal(err)
		}
		n++
	}
	fmt.Println("go: subscribers", n)
}
EOF
go get github.com/sendonce/sendonce/client@v0.0.0
grep -qx 'go 1.24' go.mod || { echo "newcomer: the SDK raised the example's go line:"; cat go.mod; exit 1; }
SENDONCE_URL=$URL SENDONCE_API_KEY=$KEY go run . | tee "$work/go-example.log"
grep -q '^go: message [0-9]* sent once: true$' "$work/go-example.log"
grep -q '^go: subscribers 7$' "$work/go-example.log" # the six of examples/people.csv and this one
step "Go SDK example"

# 4. The TypeScript package as npm pack makes it, in a project of its own.
cd "$work/sendonce/sdk/typescript"
npm ci --no-audit --no-fund --silent
npm pack --silent --pack-destination "$work" >"$work/pack.log"
tarball=$(ls "$work"/sendonce-client-*.tgz)
mkdir "$work/ts-example"
cd "$work/ts-example"
printf '{ "name": "newcomer", "private": true, "type": "module" }\n' >package.json
npm install --no-audit --no-fund --silent "$tarball"
sed 's#from "../src/index.js"#from "@sendonce/client"#' "$work/sendonce/sdk/typescript/examples/quickstart.ts" >quickstart.ts
grep -q 'from "@sendonce/client"' quickstart.ts
cat >tsconfig.json <<'EOF'
{ "compilerOptions": { "target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext", "lib": ["ES2022", "DOM"],
  "strict": true, "outDir": "out" }, "files": ["quickstart.ts"] }
EOF
"$work/sendonce/sdk/typescript/node_modules/.bin/tsc" -p tsconfig.json
cat >main.mjs <<'EOF'
import { Sendonce } from "@sendonce/client";
import { tour } from "./out/quickstart.js";
await tour(new Sendonce({ url: process.env.SENDONCE_URL, apiKey: process.env.SENDONCE_API_KEY }));
EOF
SENDONCE_URL=$URL SENDONCE_API_KEY=$KEY node main.mjs | tee "$work/ts-example.log"
grep -q '^subscriber [0-9]* ada@example.com confirmed$' "$work/ts-example.log" # from people.csv: the 409 path
grep -q '^message [0-9]* ' "$work/ts-example.log"
grep -q '^campaign [0-9]* Welcome sent 6 sent$' "$work/ts-example.log"
grep -q '^refused 422 /email$' "$work/ts-example.log"
step "TypeScript example from npm pack"

# 5. events forward → a receiver that verifies the signature with the packed package.
hook_port=$(free_port)
secret="whsec_$(head -c 32 /dev/urandom | base64 | tr -d '\n')"
cat >receiver.mjs <<'EOF'
import { createServer } from "node:http";
import { verifyWebhook } from "@sendonce/client";
const server = createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", async () => {
    try {
      const events = await verifyWebhook(new Headers(req.headers), body, process.env.SECRET);
      for (const ev of events) console.log("verified", ev.type, ev.type === "suppression.created" ? ev.data.email : "");
      res.writeHead(204).end();
    } catch (err) {
      console.log("refused", String(err));
      res.writeHead(401).end();
    }
  });
});
server.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("listening"));
EOF
SECRET=$secret PORT=$hook_port setsid node receiver.mjs >"$work/receiver.log" 2>&1 &
pids+=($!)
receiver_pid=$!
wait_for "$work/receiver.log" '^listening$' 30 "$receiver_pid"
cd "$work/sendonce"
SENDONCE_URL=$URL SENDONCE_API_KEY=$KEY SENDONCE_CONFIG="$work/cli.json" setsid bin/sendonce events forward \
  --to "http://127.0.0.1:$hook_port/hook" --secret "$secret" --type suppression.created >"$work/forward.log" 2>&1 &
pids+=($!)
forward_pid=$!
wait_for "$work/forward.log" 'forwarding events to' 30 "$forward_pid"
# The forward follows events from when its stream opens, which it does not print: suppress an address
# until one arrives (each a new event), then check that its delivery verified.
for i in $(seq 1 60); do
  SENDONCE_URL=$URL SENDONCE_API_KEY=$KEY SENDONCE_CONFIG="$work/cli.json" bin/sendonce suppressions add "forward-$i@example.com" >/dev/null
  if grep -q '^verified suppression.created forward-' "$work/receiver.log"; then break; fi
  sleep 1
done
grep -q '^verified suppression.created forward-' "$work/receiver.log" || { echo "newcomer: no forwarded event verified"; exit 1; }
if grep -q '^refused' "$work/receiver.log"; then echo "newcomer: a forwarded event did not verify"; exit 1; fi
grep -q 'suppression.created *-> 204' "$work/forward.log"
step "events forward"

echo "newcomer: all green in $((SECONDS - start)) s"
