# The two set-up commands for a fresh machine are `make run` and `make test` (see README.md).
SHELL := /bin/bash
.DEFAULT_GOAL := help
INFRA := bash deploy/local/infra.sh
SERVICES := bash deploy/local/services.sh

.PHONY: help install browser prometheus k8s-tools observe observe-stop infra migrate run stop test chaos bench bench-smoke profile openapi events typecheck cluster cluster-stop cluster-chaos cluster-bench

# The dashboard's browser tests drive the system's Chromium (make browser); no npm package may
# download a browser of its own.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1

help:
	@echo "make run    - install, start Kafka, the registry and every service, seed a demo account"
	@echo "make test   - run every test tier against real Kafka, registry and Postgres"
	@echo "make stop   - stop the services and the infrastructure"
	@echo "make observe - Prometheus on :19090 scraping make run's services, with the alert rules (make run OBSERVE=1 starts it too; docs/operations.md)"
	@echo "make observe-stop - stop it"
	@echo "make prometheus - install Debian's prometheus package (apt-get, as root) for make observe and the rule tests, if missing"
	@echo "make browser - install Debian's chromium (apt-get, as root) for the dashboard's browser tests, if missing"
	@echo "make chaos  - the fault suite: kills, a broker restart and dropped connections under load; prints the counts"
	@echo "make bench  - benchmarks (figures and ratios against baselines measured in the same run)"
	@echo "make bench-smoke - every bench part for a few seconds with tiny sizes (make test runs it): fails if a part cannot run"
	@echo "make profile - the send path and its floor under node --cpu-prof: ten heaviest functions per process, CPU per send (.run/profiles/)"
	@echo "make cluster - a 3-node Kafka cluster (RF 3, min.insync 2) with 2 processes per stage and 2 APIs (docs/scaling.md)"
	@echo "make cluster-stop - stop it"
	@echo "make cluster-bench - one process per stage against two, on the cluster (docs/scaling.md)"
	@echo "make cluster-chaos - the fault suite on the cluster: a broker killed, one process of each stage killed, traffic over both APIs"

# Installs what package-lock.json pins; skipped when node_modules is already current. (`npm install`
# rather than `npm ci`: npm 11 writes lock files without other platforms' optional packages and
# then refuses them in `npm ci`.)
node_modules/.install-stamp: package-lock.json package.json $(wildcard libs/*/package.json services/*/package.json)
	npm install --no-audit --no-fund
	@touch $@

install: node_modules/.install-stamp

# kubectl (the one on PATH, else Debian's kubernetes-client unpacked into .cache/k8s) and Strimzi's
# CRDs from Maven Central, for the checks of deploy/k8s in make test (test/deploy).
k8s-tools:
	@bash deploy/k8s/tools.sh >/dev/null

# Prometheus and promtool from Debian's prometheus package (make observe; the rule tests of make
# test). The package's own system service is kept from starting (policy-rc.d, for the install
# only): scripts/observe.sh runs a Prometheus of its own, with our config, on OBSERVE_PORT.
prometheus:
	@if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" -ne 0 ]; then \
	  echo "Prometheus is missing and installing it needs root: run  sudo apt-get install -y --no-install-recommends prometheus  (or sudo make prometheus)" >&2; exit 1; \
	fi; \
	echo "== installing prometheus (Debian package: prometheus and promtool)"; \
	own_policy=0; if [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && own_policy=1; fi; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus; code=$$?; \
	if [ "$$own_policy" = 1 ]; then rm -f /usr/sbin/policy-rc.d; fi; exit $$code

# The dashboard's e2e tests drive Debian's chromium package through playwright-core (never a
# downloaded browser). CHROMIUM_PATH names another binary instead (test/support/browser.ts).
browser:
	@if [ -n "$$CHROMIUM_PATH" ] && [ -x "$$CHROMIUM_PATH" ]; then exit 0; fi; \
	if command -v chromium >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" -ne 0 ]; then \
	  echo "Chromium is missing and installing it needs root: run  sudo apt-get install -y chromium  (or sudo make browser)" >&2; exit 1; \
	fi; \
	echo "== installing chromium (Debian package) for the dashboard's browser tests"; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

infra:
	$(INFRA) start all

migrate: install
	npx gatewayctl migrate

run: install infra migrate
	$(SERVICES) start
	@bash scripts/print-demo.sh
	@if [ "$(OBSERVE)" = 1 ]; then $(MAKE) --no-print-directory observe; fi

stop:
	-bash scripts/observe.sh stop
	-$(SERVICES) stop
	$(INFRA) stop all

test: install browser prometheus k8s-tools
	bash scripts/test.sh

chaos: install
	bash scripts/chaos.sh

bench: install
	bash scripts/bench.sh

bench-smoke: install
	BENCH_SMOKE=1 bash scripts/bench.sh

profile: install
	BENCH_PROFILE=1 BENCH_ONLY=$${BENCH_ONLY:-send-path} bash scripts/bench.sh

openapi: install
	npx tsx services/api/src/write-openapi.ts

events: install
	npx tsx libs/events/src/write-types.ts

typecheck: install
	npx tsc -p tsconfig.json --noEmit

# Prometheus with our config and rules, scraping the services of make run (scripts/observe.sh;
# docs/operations.md). OBSERVE_PORT (19090) and the other settings are read by the script.
observe: prometheus
	bash scripts/observe.sh start

observe-stop:
	bash scripts/observe.sh stop

cluster: install
	bash deploy/cluster/cluster.sh start

cluster-stop:
	bash deploy/cluster/cluster.sh stop

cluster-chaos: install
	bash scripts/on-cluster.sh npx tsx test/chaos/cluster.ts

cluster-bench: install
	bash scripts/on-cluster.sh npx tsx bench/scale-out.ts
