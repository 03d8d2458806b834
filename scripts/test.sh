#!/usr/bin/env bash
# make test: typecheck and every tier. Brings up the infrastructure it needs and tears down what
# it started; each int/e2e test file uses its own database and topic prefix.
set -Eeuo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

RESULTS=.run/test-results
STARTED_MS=$(date +%s%3N)
rm -rf "$RESULTS"
mkdir -p "$RESULTS"

started_infra=0
cleanup() {
  if (( started_infra )); then bash deploy/local/infra.sh stop all || true; fi
}
trap cleanup EXIT

status=0
# A failing step is recorded and the run goes on, so every tier runs and the summary is always printed.
typecheck_failed=0
echo "== typecheck"
npx tsc -p tsconfig.json --noEmit || { status=$?; typecheck_failed=1; echo "== typecheck FAILED"; }

run_tier() {
  local tier="$1"
  shift
  echo "== $tier tests"
  local code=0
  npx vitest run --project "$tier" --reporter=default --reporter=json --outputFile.json="$RESULTS/$tier.json" "$@" || code=$?
  # vitest's JSON report calls a run with unhandled errors a success: its exit status tells.
  echo "$code" >"$RESULTS/$tier.exit"
  return "$code"
}

run_tier unit || status=$?

if ! bash deploy/local/infra.sh status >/dev/null 2>&1; then
  echo "== starting Kafka and the schema registry (stopped again at the end)"
  started_infra=1
  bash deploy/local/infra.sh start all
fi

# int: two files at a time, each with its own database, topics and ports (vitest.config.ts).
run_tier int --maxWorkers=2 --minWorkers=1 || status=$?
# e2e: one file at a time. Each file runs a whole stack (three to ten service processes beside
# Kafka, the registry and Postgres); two stacks at once on CI's two cores doubled every file's
# time and timed out waits that hold with one (a stack's start, a receiver's recovery, CLI runs).
run_tier e2e --no-file-parallelism || status=$?
# The files that stop the shared broker, after the others and alone (vitest.config.ts).
run_tier e2e-alone --no-file-parallelism || status=$?

# The bench's smoke: every `make bench` part for a few seconds with tiny sizes (bench/run.ts,
# BENCH_SMOKE), so a bench that no longer runs fails here the day it breaks. Its figures mean nothing.
echo "== bench smoke"
smoke_code=0
BENCH_SMOKE=1 bash scripts/bench.sh || smoke_code=$?
echo "$smoke_code" >"$RESULTS/bench-smoke.exit"
(( smoke_code == 0 )) || status=$smoke_code

# Stop what we started before the summary, so the summary is the run's very last line.
cleanup
started_infra=0

# The closing lines: a TAP-style total in the form node's test runner closes with, then the plain
# "N passed, N failed" alone as the very last line (vitest's own per-tier summaries above are not
# a format CI reads).
node -e '
  const fs = require("fs");
  let passed = 0, failed = Number(process.argv[2]), skipped = 0, todo = 0, suites = 0;
  // What failed is named here too, so a log cut down to its tail (as CI keeps it) still says which.
  const failures = [];
  for (const tier of ["unit", "int", "e2e", "e2e-alone"]) {
    const file = process.argv[1] + "/" + tier + ".json";
    // A tier that wrote no report (it crashed before reporting) counts as one failure.
    if (!fs.existsSync(file)) { failed += 1; continue; }
    const r = JSON.parse(fs.readFileSync(file, "utf8"));
    passed += r.numPassedTests;
    // A failed test counts once; a file that failed with no failed test (it did not load, a hook
    // threw) counts as one failure more. (numFailedTestSuites would count the file and each describe again.)
    const fileErrors = (r.testResults ?? []).filter((f) => f.status === "failed" && !f.assertionResults.some((a) => a.status === "failed")).length;
    failed += r.numFailedTests + fileErrors;
    for (const f of r.testResults ?? []) {
      const where = tier + ": " + require("path").relative(process.cwd(), f.name);
      for (const a of f.assertionResults) if (a.status === "failed") failures.push(where + " > " + a.fullName + " :: " + String(a.failureMessages?.[0] ?? "").split("\n")[0].slice(0, 300));
      if (f.status === "failed" && !f.assertionResults.some((a) => a.status === "failed")) failures.push(where + " (the file failed outside its tests) :: " + String(f.message ?? "").split("\n").slice(0, 3).join(" | ").slice(0, 400));
    }
    // A tier that exited non-zero with no failed test or file (errors thrown outside any test) counts as one failure.
    const exit = fs.existsSync(process.argv[1] + "/" + tier + ".exit") ? Number(fs.readFileSync(process.argv[1] + "/" + tier + ".exit", "utf8")) : 0;
    if (exit !== 0 && r.numFailedTests + fileErrors === 0) failed += 1;
    skipped += r.numPendingTests ?? 0;
    todo += r.numTodoTests ?? 0;
    suites += r.numTotalTestSuites ?? 0;
  }
  // The bench smoke counts as one failure when a bench part could not run.
  const smoke = process.argv[1] + "/bench-smoke.exit";
  if (fs.existsSync(smoke) && Number(fs.readFileSync(smoke, "utf8")) !== 0) { failed += 1; failures.push("bench smoke: a `make bench` part could not run (see the == bench smoke section)"); }
  for (const f of failures) console.log("# FAILED " + f);
  const ms = Date.now() - Number(process.argv[3]);
  console.log([`# tests ${passed + failed + skipped + todo}`, `# suites ${suites}`, `# pass ${passed}`, `# fail ${failed}`, "# cancelled 0", `# skipped ${skipped}`, `# todo ${todo}`, `# duration_ms ${ms}`].join("\n"));
  console.log(`${passed} passed, ${failed} failed`);
' "$RESULTS" "$typecheck_failed" "$STARTED_MS"
exit "$status"
