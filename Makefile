# assay — `make run` serves the web app; `make test` installs what the tests need and runs them all.
GO        ?= go
DB        ?= assay.db
ADDR      ?= 127.0.0.1:8080
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)

FUZZTIME  ?= 20s
FUZZ      := ./store/ingest:FuzzParse ./config:FuzzParse ./runner/judge:FuzzRead ./runner/judge:FuzzDecodeObject ./eee:FuzzRead

.PHONY: build run test test-deps generate lint bench fuzz clean

build: ## build ./assay
	$(GO) build -ldflags "$(LDFLAGS)" -o assay ./cmd/assay

run: build ## build and serve at http://$(ADDR) with ./$(DB)
	./assay serve --addr $(ADDR) --db $(DB)

# The race detector watches assay's code and every library but SQLite's
# (modernc.org, C translated to Go): instrumented, its page reads and
# writes made the database-heavy tests four to five times slower.
RACE      := -race -gcflags='modernc.org/...=-race=false'

# The engine's tests of what a database's faults and other processes do,
# run again against Postgres: leases, take-overs, cancels from elsewhere,
# resumes, budgets, a restarted server.
PG_RUNNER_TESTS := TestATakeOver|TestARunIsExecutedByOneProcess|TestAnExpiredOrDeadLease|TestACancelFromAnotherProcess|TestResume|TestCancelThenResume|TestRunScoresEveryTaskOnce|Budget|TestPostgresRestarted|TestConnectionsCut|TestInterrupted|TestAResumedRunPollsItsBatchAgain|TestARunIsSharedByTheServersOnItsDatabase|TestARunWithABudgetIsNotShared|TestAServerJoiningLateFindsWorkLeft

test: test-deps ## everything the tests need, then the whole suite under the race detector; the store's, the engine's and the crash tests again against Postgres
	$(GO) test $(RACE) -count=1 ./...
	ASSAY_TEST_STORE=postgres $(GO) test -count=1 ./store/ ./tally/
	ASSAY_TEST_STORE=postgres $(GO) test -count=1 -run '$(PG_RUNNER_TESTS)' ./runner/
	ASSAY_TEST_STORE=postgres $(GO) test -count=1 -run 'TestKilled|TestTwoProcesses|TestServersShareOneDatabase|TestAServerKilledTenTimes' ./cmd/assay/

test-deps: ## install Chromium, bubblewrap and the MCP test server when missing
	@./.ci/deps

generate: ## regenerate the templ components
	$(GO) tool templ generate

lint: ## vet, gofmt, stale generated files, functions in form and folders that follow the imports
	$(GO) vet ./...
	@./.ci/form
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt would change:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	@$(GO) tool templ generate >/dev/null 2>&1; git diff --exit-code -- '*_templ.go' || { echo "templ generate changed *_templ.go: run make generate and commit"; exit 1; }

fuzz: ## each fuzz target for $(FUZZTIME): the dataset, run-file, judge-answer and EEE readers
	@FUZZTIME=$(FUZZTIME) GO=$(GO) ./.ci/fuzz $(FUZZ)

bench: ## benchmarks that print figures
	$(GO) test -run '^$$' -bench . -benchtime 1x ./...

clean:
	rm -f assay
