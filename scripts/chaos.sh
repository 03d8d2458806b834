#!/usr/bin/env bash
# make chaos: the fault suite against real Kafka, registry and Postgres (started here when not
# running, and stopped again). It restarts the broker, so nothing else should use it meanwhile.
set -Eeuo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
started_infra=0
cleanup() { if (( started_infra )); then bash deploy/local/infra.sh stop all || true; fi; }
trap cleanup EXIT
if ! bash deploy/local/infra.sh status >/dev/null 2>&1; then
  echo "== starting Kafka and the schema registry (stopped again at the end)"
  started_infra=1
  bash deploy/local/infra.sh start all
fi
npx tsx test/chaos/main.ts
