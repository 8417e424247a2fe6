# sendonce — the two commands a newcomer needs are `make run` and `make test`.
GO      ?= go
TOOL    := $(GO) tool -modfile=tools/go.mod
PKGS    := ./...

.PHONY: run test check lint tidy generate generated ts build image harness fmt vet fuzz clean-dev bench loadtest chaos chaos-skew chaos-bulk chaos-senders chaos-messages chaos-sequences chaos-approvals chaos-ab chaos-pool chaos-localtime chaos-pacing postman failover upgrade

## run: start a local PostgreSQL (in ./.sendonce), migrate, create a demo account, serve on 127.0.0.1:8080
run:
	$(GO) run ./cmd/sendonce dev

## test: every test, on real PostgreSQL: one throwaway cluster for the run unless TEST_DATABASE_URL is set; then the
##       Go SDK's own module (client/: its unit tests; its tests against the service are internal/sdktest's).
##       One package's test binary at a time (-p 1; tests within a package still run in parallel): the packages share
##       the cluster, whose oldest writing transaction holds back every database's events, so one package's bulk
##       fixtures stalled another's event and dashboard tests
test: harness
	bin/sendonce-harness testdb -- $(GO) test -p 1 -count=1 -timeout 30m $(PKGS)
	cd client && $(GO) test -count=1 ./...

## postman: run the Postman collection (api/postman) with newman against a real `sendonce serve` on a throwaway cluster
postman: harness
	$(GO) build -o bin/sendonce-postman ./cmd/sendonce
	api/postman/run.sh bin/sendonce-postman bin/sendonce-harness

## fuzz: run every fuzz target briefly (FUZZTIME each: a duration, or a count such as 3000x, which CI uses to avoid golang/go#75804; the seed corpus also runs in `make test`)
FUZZTIME ?= 5s
fuzz:
	@grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u | while read -r dir; do \
	  for target in $$(grep -h '^func Fuzz' $$dir/*_test.go | sed 's/func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
	    echo "fuzz $$dir $$target"; \
	    $(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) $$dir || exit 1; \
	  done; \
	done

## generate: regenerate internal/store and internal/harnessstore (sqlc), api/ and the Go SDK's client/client.gen.go (oapi-codegen;
##           the SDK is the module in client/, which the service requires through a replace)
generate:
	@# Every file of the two packages is sqlc's: remove them first, so a query taken out leaves no stale file behind.
	rm -f internal/store/*.go internal/harnessstore/*.go
	$(TOOL) sqlc generate
	@if [ -f api/oapi-codegen.yaml ]; then $(TOOL) oapi-codegen -config api/oapi-codegen.yaml openapi.yaml; fi
	$(TOOL) oapi-codegen -config api/oapi-codegen.client.yaml openapi.yaml
	@# The generator's package comment ("provides primitives to interact with the openapi HTTP API") would
	@# come before doc.go's in `go doc` (files are read in name order): keep only its DO NOT EDIT line,
	@# apart from the package clause.
	sed -i -e '/^\/\/ Package client provides primitives/,/^\/\/$$/d' -e 's/^\(\/\/ Code generated .* DO NOT EDIT\.\)$$/\1\n/' client/client.gen.go

## check: formatting, vet, lint, generated code current, tests
check: fmt vet lint tidy generated test

## lint: golangci-lint (.golangci.yml: errcheck, staticcheck, govet, ineffassign, unused, revive's exported rule,
##       gosec's SQL and TLS rules, bodyclose) over the service module and the Go SDK's, at 0 findings. The linter is
##       pinned in a module of its own (tools/lint/go.mod), so its dependencies constrain neither the service's
##       go.mod nor the code generators' in tools/
LINT := $(GO) tool -modfile=$(CURDIR)/tools/lint/go.mod golangci-lint
lint:
	$(LINT) run ./...
	cd client && $(LINT) run --config ../.golangci.yml ./...

## tidy: fail when go.mod or go.sum differ from what `go mod tidy` makes (a module imported directly is not
##       marked indirect, none is left unused)
tidy:
	$(GO) mod tidy -diff
	cd tools && $(GO) mod tidy -diff
	cd tools/lint && $(GO) mod tidy -diff
	cd client && $(GO) mod tidy -diff

## generated: fail when the committed generated code differs from what `make generate` makes
generated: generate
	@git diff --exit-code -- internal/store internal/harnessstore api client || (echo "generated code is stale: run 'make generate' and commit" && exit 1)
	@test -z "$$(git status --porcelain -- internal/store internal/harnessstore api client)" || (echo "generated files are not committed:" && git status --porcelain -- internal/store internal/harnessstore api client && exit 1)

## ts: the TypeScript package (sdk/typescript): install its pinned tools, regenerate its types from openapi.yaml
##     (the committed src/schema.d.ts must not change), type-check the package and its examples, run its tests on
##     Node (npm test: retries, pagination, webhook verification, against the built dist/), and type-check
##     the dashboard's modules (tsc --checkJs over internal/dashboard/static, with the package's pinned TypeScript)
ts:
	cd sdk/typescript && timeout 600 npm ci --no-audit --no-fund && npm run generate && npm run check && npm test
	sdk/typescript/node_modules/.bin/tsc -p internal/dashboard/tsconfig.json
	@git diff --exit-code -- sdk/typescript/src/schema.d.ts || (echo "sdk/typescript/src/schema.d.ts is stale: run 'make ts' and commit" && exit 1)
	@test -z "$$(git status --porcelain -- sdk/typescript/src)" || (echo "sdk/typescript/src is not committed:" && git status --porcelain -- sdk/typescript/src && exit 1)

fmt:
	@if git grep -nE '^(<<<<<<<|>>>>>>>) ' -- . ':!Makefile'; then echo "merge conflict markers left in the tree"; exit 1; fi
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## vet: go vet over the service module and the Go SDK's (client/, a module of its own)
vet:
	$(GO) vet $(PKGS)
	cd client && $(GO) vet ./...

## build: a static binary in bin/, its `sendonce version` the release from `git describe` (dev outside a git clone)
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-X main.version=$(VERSION)" -o bin/sendonce ./cmd/sendonce

## image: the container image sendonce:local (compose.yaml's default), its version from `git describe` as for build
##        (the build context carries no .git, so the version comes in as a build argument)
image:
	docker build --build-arg VERSION=$(VERSION) -t sendonce:local .

## harness: bin/sendonce-harness, the test and measurement harnesses (chaos, sinks, load test, test
##          databases), apart from the product binary; they run the sendonce binary given by -sendonce
harness:
	$(GO) build -o bin/sendonce-harness ./cmd/sendonce-harness

clean-dev:
	rm -rf .sendonce

## chaos: SIGKILL `sendonce serve` (bin/sendonce, run by bin/sendonce-harness) mid-campaign KILLS times; every recipient exactly once (PROVIDER=http|smtp)
##        CHAOS_FLAGS=-default-lease keeps the 2m lease and prints restart→sent (liveness rescue)
PROVIDER    ?= http
RECIPIENTS  ?= 50000
KILLS       ?= 5
CHAOS_FLAGS ?=
chaos: build harness
	./bin/sendonce-harness chaos -sendonce bin/sendonce -provider $(PROVIDER) -recipients $(RECIPIENTS) -kills $(KILLS) $(CHAOS_FLAGS)

## chaos-bulk: one account cancels its RECIPIENTS campaign mid-send (after KILLS SIGKILLs of the sender) and imports
##             IMPORTS subscribers, while another account's suppressions are timed until their events are readable;
##             prints that delay (target ≤ 1 s). CHAOS_FLAGS=-cut stops the cancel after its first transaction (the
##             executors' sweep closes the rest); -max-delay=… fails past a bound
IMPORTS ?= 200000
chaos-bulk: build harness
	./bin/sendonce-harness chaos -sendonce bin/sendonce -bulk -recipients $(RECIPIENTS) -imports $(IMPORTS) -kills $(KILLS) $(CHAOS_FLAGS)

## chaos-skew: RECIPIENTS sent by two replicas whose clocks are 30 s behind and 30 s ahead of PostgreSQL's
##             (SENDONCE_CLOCK_SKEW; CHAOS_FLAGS=-skews=-30s,0s,30s for more), each SIGKILLed in turn KILLS times:
##             exactly once (idempotent sink): leases, heartbeats and retries are judged on the database's clock
chaos-skew: build harness
	./bin/sendonce-harness chaos -sendonce bin/sendonce -skew -recipients $(RECIPIENTS) -kills $(KILLS) $(CHAOS_FLAGS)

## chaos-senders: two accounts through their own senders (Resend-shaped: exactly once; Postmark-shaped: at most once) under SIGKILL
chaos-senders: build harness
	./bin/sendonce-harness chaos -sendonce bin/sendonce -senders -recipients 2000 -kills 3 $(CHAOS_FLAGS)

## chaos-messages: POST MESSAGES transactional messages (keyed, some in batches) while every service process is SIGKILLed
##                 KILLS times; each message exactly once (PROVIDER=http) or at most once with the rest `unknown` (smtp)
##                 and each message's send.* event once at an event endpoint of the account
##                 PROVIDER=smtp CHAOS_FLAGS=-default-sender: through an SMTP sender set as the account's default
##                 (the environment's provider the idempotent log): still at most once, no replay through the wrong provider
MESSAGES ?= 5000
chaos-messages: build harness
	./bin/sendonce-harness chaos -sendonce bin/sendonce -messages -provider $(PROVIDER) -messages $(MESSAGES) -kills $(KILLS) $(CHAOS_FLAGS)

## chaos-sequences: SUBSCRIBERS join a list over JOIN while a three-step sequence (send, wait, send, wait, send; short
##                  waits) runs and its executors are SIGKILLed KILLS times, during sends and waits, with an opt-out
##                  wave midway: each step exactly once to those who stayed, none after an opt-out committed
SUBSCRIBERS ?= 5000
JOIN        ?= 1m
chaos-sequences: build harness
	./bin/sendonce-harness chaos -sendonce bin/sendonce -sequences -subscribers $(SUBSCRIBERS) -join $(JOIN) -kills $(KILLS) $(CHAOS_FLAGS)

## chaos-approvals: approve CAMPAIGNS draft campaigns from concurrent clients while the API process is SIGKILLed
##                  KILLS times: GET /v1/audit-log shows exactly the approvals that committed (one campaign.approve
##                  entry and one campaign.approved event per approved campaign, none for a draft)
CAMPAIGNS ?= 400
chaos-approvals: build harness
	./bin/sendonce-harness chaos -sendonce bin/sendonce -approvals -campaigns $(CAMPAIGNS) -kills $(KILLS) $(CHAOS_FLAGS)

## chaos-ab: an A/B test (3 variants, a 20 % test group, winner chosen by hand through the API) to RECIPIENTS
##           while `sendonce serve` is SIGKILLed KILLS times: in the test phase, at the winner's call and during the
##           winner's send; each recipient exactly once, of one variant (its hash's in the test group, the winner's in
##           the rest), the sink's subject that of the row's variant (docs/ab-tests.md)
chaos-ab: build harness
	./bin/sendonce-harness chaos -sendonce bin/sendonce -ab -provider http -recipients $(RECIPIENTS) -kills $(KILLS) $(CHAOS_FLAGS)

## chaos-pool: a campaign on a sender pool of two SMTP sinks; the primary dies mid-campaign (drops its answers after
##             DATA, then refuses connections) while `sendonce serve` is SIGKILLed KILLS times: the refused rows move
##             to the secondary, the in-doubt ones stay unknown (skip): 0 duplicates, 0 lost (docs/providers.md)
##             CHAOS_FLAGS=-messages: the recipients are transactional messages naming the pool, not a campaign's
chaos-pool: build harness
	./bin/sendonce-harness chaos -sendonce bin/sendonce -pool -recipients $(RECIPIENTS) -kills $(KILLS) $(CHAOS_FLAGS)

## chaos-localtime: a campaign with deliver_at_local to recipients over 9 zones (UTC+0 ones due at the next minute,
##                  others hours later) while `sendonce serve` is SIGKILLed in the build, while every row waits and
##                  KILLS-2 times in the due rows' send: each due row once and none before its minute, the later rows
##                  queued at the due time computed by Go's zone database (docs/executor.md)
chaos-localtime: build harness
	./bin/sendonce-harness chaos -sendonce bin/sendonce -localtime -provider http -recipients $(RECIPIENTS) -kills $(KILLS) $(CHAOS_FLAGS)

## chaos-pacing: a campaign to 3 domains through an SMTP sender limiting one to 5/s while the sink defers (421) another
##               for 3 s: prints each domain's rate from the sink's timestamps (the limited one within 10 % of its limit,
##               the free one unhindered) and exactly once (docs/executor.md)
chaos-pacing: build harness
	./bin/sendonce-harness chaos -sendonce bin/sendonce -pacing $(CHAOS_FLAGS)

## bench: import, build, send and the raw claim/ack ceiling on a throwaway cluster (BENCH_FLAGS="--recipients=1000000 --batch-size=500")
##        `sendonce bench`, run by the harness, which starts the SMTP sink of --provider smtp in its own process
BENCH_FLAGS ?=
bench: harness
	$(GO) build -o bin/sendonce-bench ./cmd/sendonce
	bin/sendonce-harness bench -sendonce bin/sendonce-bench $(BENCH_FLAGS)

## loadtest: 200 API clients for 60 s against `sendonce serve` (bin/sendonce-bench, a child of the harness) while a 100,000-recipient campaign sends, after its idle send
##           rate is measured; prints the accepted requests' p50/p99, the 503s shed and the executor's rate under load ÷ idle (LOADTEST_FLAGS="--duration=20s")
LOADTEST_FLAGS ?=
loadtest: harness
	$(GO) build -o bin/sendonce-bench ./cmd/sendonce
	bin/sendonce-harness loadtest -sendonce bin/sendonce-bench $(LOADTEST_FLAGS)

## failover: etcd and two PostgreSQL nodes under Patroni (synchronous_mode) on 127.0.0.1, sendonce on a multi-host URL
##           (target_session_attrs=read-write), the leader's node SIGKILLed mid-campaign; prints
##           `failover: recipients=… duplicates=… lost=… unknown=… stall_s=…` (needs patroni, etcd-server)
##           FAILOVER_FLAGS="-mode stop" stops the leader's Patroni instead; "-async" uses asynchronous replication;
##           "-provider smtp" sends over SMTP (no second copy beyond the rows reported unknown); "-async -lag 10s" stops
##           the standby's WAL receiver 10 s before the kill and prints what was sent again
FAILOVER_RECIPIENTS ?= 20000
FAILOVER_FLAGS      ?=
failover: build
	$(GO) run ./deploy/failover -sendonce bin/sendonce -recipients $(FAILOVER_RECIPIENTS) $(FAILOVER_FLAGS)

## upgrade: a rolling upgrade mid-send: the previous release (a commit of main, built from git history) sends a
##          campaign to the idempotent sink and is SIGKILLed at 30 %; this release migrates and takes over, the previous
##          one sending beside it on the new schema; prints `upgrade: from=… recipients=… duplicates=… lost=… …`.
##          Fails (rather than skips) without the commit in git history when CI is set.
UPGRADE_RECIPIENTS ?= 20000
UPGRADE_FLAGS      ?=
upgrade: build
	$(GO) run ./deploy/upgrade -sendonce bin/sendonce -recipients $(UPGRADE_RECIPIENTS) $(UPGRADE_FLAGS)
