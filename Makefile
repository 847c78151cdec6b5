SHELL := /bin/bash
# atmlab: `make` builds bin/atmlab; `make test` runs the tests CI runs (the
# integration tests need root), `make test-long` the long ones too; `make
# bench` prints the benchmark table; `make docs` builds the manual (docs/) as
# a site in site/.
GO ?= go
export PATH := $(PATH):/usr/local/go/bin

.PHONY: all build deps test test-long unit cross integration bench lab demo docs docs-cli fuzz clean

all: build

# atmlab --version prints these; a plain `go build` falls back to Go's own
# build stamp (the module version, vcs.revision).
VERSION ?= $(shell git describe --tags --dirty 2>/dev/null || echo devel)
COMMIT ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty)

build:
	$(GO) build -ldflags "-X main.version=$(VERSION) -X main.commit=$(COMMIT)" -o bin/atmlab ./cmd/atmlab

# The command reference (docs/cli/) and the man pages (docs/man/), from the
# command tree; a unit test fails when they are stale.
docs-cli:
	$(GO) run ./cmd/atmlab gen-docs --md docs/cli --man docs/man

# What labs and integration tests run inside the hosts (Debian packages);
# tshark checks that Wireshark decodes atmlab's captures, traceroute the routers,
# chromium (headless, internal/headless) the web pages; slurm-wlm and munge run a
# campaign on a one-node Slurm, flent plots a run's flent files, kubectl checks its
# Kubernetes manifests (Debian's kubernetes-client only when no kubectl is
# installed: it conflicts with others).
deps:
	@command -v iperf3 >/dev/null && command -v iperf >/dev/null && command -v ethtool >/dev/null && command -v tc >/dev/null && command -v ping >/dev/null && command -v tshark >/dev/null && command -v traceroute >/dev/null && test -x /usr/bin/chromium && command -v slurmctld >/dev/null && command -v munged >/dev/null && test -x /usr/bin/flent || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iperf3 iperf ethtool iproute2 iputils-ping tshark traceroute chromium slurm-wlm munge flent >/dev/null; }
	@command -v kubectl >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kubernetes-client >/dev/null; }

# Unit tests need no root; integration tests run real namespaces and traffic
# one at a time (-p 1), as root.
test: deps unit integration

# `make test` and the long integration tests it leaves out, each proved more
# cheaply in CI (docs/validation.md, "Long tests"): four lessons in real time,
# the OC-3c sawtooth sweep, a minute of overload.
test-long: export ATMLAB_LONG=1
test-long: test

# The atmlab_stub tests and internal/crosscheck keep every verb that needs
# no kernel building and working on macOS and Windows (the others say they
# need Linux): crosscheck type-checks cmd/atmlab and all it imports for
# darwin/arm64 and windows/amd64 from source, which is what the two
# cross-builds proved of atmlab's code, without compiling the standard
# library and the dependencies twice more: cold, the two builds took about
# 310 s of CPU; the type-check, one `go list -deps` per target and the
# packages checked side by side, about 10 (go/build's source importer
# spent 170 running `go list` once per import). `make cross` still
# cross-builds.
unit:
	$(GO) vet ./...
	$(GO) vet -tags integration ./test/...
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -tags atmlab_stub ./cmd/atmlab

cross:
	GOOS=darwin GOARCH=arm64 $(GO) build -o /dev/null ./cmd/atmlab
	GOOS=windows GOARCH=amd64 $(GO) build -o /dev/null ./cmd/atmlab

# A rate test the hypervisor never left alone is skipped as "not judged"
# (test/steal_test.go); the last line counts them, so that CI shows it.
integration: deps
	log=$$(mktemp); $(GO) test -tags integration -p 1 -count=1 -timeout 40m -v ./test/... 2>&1 | tee $$log | grep -v '^=== '; rc=$${PIPESTATUS[0]}; \
	  n=$$(grep -c 'not judged (hypervisor steal)' $$log); rm -f $$log; \
	  echo "integration: $$n test(s) not judged for the hypervisor's steal"; exit $$rc

# Every benchmark, printed and kept in docs/bench-latest.md with its date,
# commit, machine and load. With BEFORE=/path/to/another/atmlab (or
# name=path,...): the 10G TCP, 1G UDP and OC-12c UDP rows for it and this
# tree, alternating, and the loop's latency rows (TestBenchAB, TestDelayAB,
# TestLatencyAB). Virtual time's speed and the 200-host fabric take ~4 min,
# virtual time beside ns-3 (scripts/bench/ns3/; skipped without libns3-dev) ~3,
# the seed labs' stability ~12 min, their determinism ~3 min.
bench: deps build
	GO=$(GO) scripts/bench.sh $(BEFORE)

# The quick start's lab: two hosts on a 100M switch, its experiments (TCP,
# UDP, RR over message sizes) in quick mode, results and report in results/.
lab: deps build
	./bin/atmlab lab run topologies/sw100.yaml --quick --force --out results/sw100-quick

# The praktikum's Tasks I-IV in quick mode (about two minutes on a quiet two-core machine): the report in
# results/praktikum-demo/report.html, its main figure task2-udp.png.
demo: deps build
	./bin/atmlab lab run topologies/praktikum.yaml --quick --force --out results/praktikum-demo

# Each line fuzzes one target for FUZZTIME; scripts/fuzz.sh fails when the
# package has no such target, and a unit test (scripts/) checks that every
# line names one and every fuzz target in the tree has its line.
FUZZTIME ?= 30s
FUZZ = GO=$(GO) FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

# The manual as a site in site/ (open site/index.html): Debian's mkdocs and
# mkdocs-material, installed if missing. --strict fails on a broken link or a
# page missing from the nav; the pages read the same on a forge.
docs:
	@command -v mkdocs >/dev/null && test -d /usr/share/mkdocs/themes/material || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mkdocs mkdocs-material >/dev/null; }
	mkdocs build --strict --site-dir site

fuzz:
	$(FUZZ) ./topologies/labfile/ FuzzParse
	$(FUZZ) ./devices/ FuzzParseBuild
	$(FUZZ) ./topologies/labfile/ FuzzSweep
	$(FUZZ) ./topologies/labfile/ FuzzVariantsAsFromScratch
	$(FUZZ) ./topologies/labyaml/ FuzzDocument
	$(FUZZ) ./cells/ FuzzHeader
	$(FUZZ) ./cells/ FuzzAAL5
	$(FUZZ) ./cells/ FuzzAAL34
	$(FUZZ) ./cells/ FuzzDecapsulate
	$(FUZZ) ./cells/native/ FuzzParse
	$(FUZZ) ./emulator/vsctp/ FuzzParse
	$(FUZZ) ./harness/labrun/ FuzzIperf2CSV
	$(FUZZ) ./emulator/ FuzzSegment
	$(FUZZ) ./netstat/ FuzzParse
	$(FUZZ) ./netstat/ FuzzParseDev
	$(FUZZ) ./netstat/ FuzzParseSteal
	$(FUZZ) ./netstat/ FuzzParseBusy
	$(FUZZ) ./netstat/ FuzzParseSchedstat
	$(FUZZ) ./kernel/ FuzzFields
	$(FUZZ) ./internal/shellquote/ FuzzQuote
	$(FUZZ) ./control/ FuzzSetRequest
	$(FUZZ) ./harness/results/ FuzzLines
	$(FUZZ) ./harness/labrun/ FuzzRecords
	$(FUZZ) ./harness/labrun/ FuzzIdentity
	$(FUZZ) ./harness/labrun/ FuzzFigures
	$(FUZZ) ./harness/report/ FuzzReadLabs
	$(FUZZ) ./internal/labshell/ FuzzSplit
	$(FUZZ) ./harness/lesson/ FuzzParseWorksheet
	$(FUZZ) ./backend/cut/ FuzzDecode
	$(FUZZ) ./backend/virtual/remote/ FuzzDecode

clean:
	rm -rf bin results site
