# The two set-up commands for a fresh machine are `make run` and `make test` (see README.md).
SHELL := /bin/bash
.DEFAULT_GOAL := help
INFRA := bash deploy/local/infra.sh
SERVICES := bash deploy/local/services.sh

.PHONY: help install browser infra migrate run stop test chaos bench openapi events typecheck

# The dashboard's browser tests drive the system's Chromium (make browser); no npm package may
# download a browser of its own.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1

help:
	@echo "make run    - install, start Kafka, the registry and every service, seed a demo account"
	@echo "make test   - run every test tier against real Kafka, registry and Postgres"
	@echo "make stop   - stop the services and the infrastructure"
	@echo "make browser - install Debian's chromium (apt-get, as root) for the dashboard's browser tests, if missing"
	@echo "make chaos  - the fault suite: kills, a broker restart and dropped connections under load; prints the counts"
	@echo "make bench  - benchmarks (figures and ratios against baselines measured in the same run)"

# Installs what package-lock.json pins; skipped when node_modules is already current. (`npm install`
# rather than `npm ci`: npm 11 writes lock files without other platforms' optional packages and
# then refuses them in `npm ci`.)
node_modules/.install-stamp: package-lock.json package.json $(wildcard libs/*/package.json services/*/package.json)
	npm install --no-audit --no-fund
	@touch $@

install: node_modules/.install-stamp

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

stop:
	-$(SERVICES) stop
	$(INFRA) stop all

test: install browser
	bash scripts/test.sh

chaos: install
	bash scripts/chaos.sh

bench: install
	bash scripts/bench.sh

openapi: install
	npx tsx services/api/src/write-openapi.ts

events: install
	npx tsx libs/events/src/write-types.ts

typecheck: install
	npx tsc -p tsconfig.json --noEmit
