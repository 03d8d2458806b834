#!/usr/bin/env bash
# make bench: benchmarks against real Kafka, registry and Postgres; figures and ratios against
# baselines measured in the same run. Reports only: exits 0 whether targets are met or missed,
# non-zero only when the bench could not run. Brings up the infrastructure if it is not up and
# stops it again at the end only if it started it. Traffic goes to 127.0.0.1 only.
#
#   BENCH_DURATION_S (20)  BENCH_WARMUP_S (5)  BENCH_CONNECTIONS (32)  BENCH_TIMEOUT_S
#   BENCH_STACK_ENV="DELIVERY_CONCURRENCY=64 ..."  extra environment for the stack's services
#   BENCH_ONLY=baseline|floor|send|send-path|compare|pbx|webhooks    run one part only (baseline, floor and send are the three sides
#                     of the send path, send-path all three; compare: the decider, verify and the send path beside BENCH_BEFORE)
#   BENCH_ONLY=verify verify at 100k and 200k entries, seconds, events/s and peak RSS (bench/verify.ts; BENCH_VERIFY_1M=1: and 1M;
#                     BENCH_VERIFY_GAP_MS (120000): event time between one customer's sends)
#   BENCH_ONLY=policy-state  the policy stage storing a busy customer's state per batch, whole against snapshot and tail
#                     (bench/policy-state.ts; BENCH_STATE_HISTORY (2000) sends of history, BENCH_STATE_BATCHES (200))
#   BENCH_BEFORE (6a8291a^)  the commit compare measures against: extracted under .run/bench (git archive), it runs its own
#                     stack on its own migrations in its own database
#   The send path runs two workloads (issue 27): inside conversations (BENCH_CONTACTS_PER_INSTANCE (250) people write
#                     to each instance first; authentication, no typing) and first contacts (human pacing at the real
#                     defaults); more than 1% of either's measured sends refused fails the run
#   BENCH_SMOKE=1     (make bench-smoke, run by make test) every part for a few seconds with tiny sizes; non-zero if one cannot run
#   BENCH_PROFILE=1   (make profile) the send path's and floor's processes under node --cpu-prof (.run/profiles/): the ten
#                     heaviest functions per process over the measured window, CPU per send beside the floor's
set -Eeuo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

KAFKA_PORT="${KAFKA_PORT:-19092}"
REGISTRY_PORT="${REGISTRY_PORT:-18081}"
# The bench process and its children carry this marker in their environment (not exported to
# this shell's own helpers), so leftovers can be found and stopped by pid.
BENCH_RUN_ID="bench-$$-$(date +%s)"

started_infra=0

leftovers() { # pids of live processes started by this run (other than this shell)
  local f pid
  for f in /proc/[0-9]*/environ; do
    pid="${f#/proc/}"; pid="${pid%/environ}"
    if { tr '\0' '\n' <"$f"; } 2>/dev/null | grep -qx "BENCH_RUN_ID=$BENCH_RUN_ID"; then echo "$pid"; fi
  done
}

cleanup() {
  local pids
  pids="$(leftovers | tr '\n' ' ')"
  if [[ -n "${pids// /}" ]]; then
    echo "bench: stopping leftover processes: $pids" >&2
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null || true
    sleep 5
    pids="$(leftovers | tr '\n' ' ')"
    # shellcheck disable=SC2086
    [[ -n "${pids// /}" ]] && kill -KILL $pids 2>/dev/null || true
  fi
  if (( started_infra )); then bash deploy/local/infra.sh stop all || true; fi
}
trap cleanup EXIT

infra_up() {
  # Ours (status) or someone else's on the same ports (e.g. another checkout's run dir).
  bash deploy/local/infra.sh status >/dev/null 2>&1 && return 0
  timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$KAFKA_PORT" 2>/dev/null \
    && curl -fsS -m 5 -o /dev/null "http://127.0.0.1:$REGISTRY_PORT/apis/ccompat/v7/subjects" 2>/dev/null
}

if ! infra_up; then
  echo "== starting Kafka and the schema registry (stopped again at the end)"
  started_infra=1
  if ! bash deploy/local/infra.sh start all; then
    echo "bench: the infrastructure could not be started (see above); nothing was measured" >&2
    exit 1
  fi
fi

if [[ "${BENCH_PROFILE:-0}" == 1 ]]; then
  # Every service process the run starts (test/support/stack.ts reads STACK_NODE_FLAGS) and the
  # floor's stages write a CPU profile here when they exit (node refuses --cpu-prof in NODE_OPTIONS).
  BENCH_PROFILE_DIR="$PWD/.run/profiles/$(date -u +%Y%m%dT%H%M%SZ)"
  mkdir -p "$BENCH_PROFILE_DIR"
  export BENCH_PROFILE_DIR STACK_NODE_FLAGS="${STACK_NODE_FLAGS:-} --cpu-prof --cpu-prof-dir=$BENCH_PROFILE_DIR"
fi

status=0
echo "== send path benchmark"
# The compliance bench runs verify in this process: it gets the young generation gatewayctl runs with
# (services/gatewayctl/bin/gatewayctl.js); the raw reads it is compared with run here too.
BENCH_RUN_ID="$BENCH_RUN_ID" node --max-semi-space-size=64 --import tsx bench/run.ts || status=$?

left="$(leftovers | tr '\n' ' ')"
if [[ -n "${left// /}" ]]; then
  echo "bench: processes still running after the bench: $left" >&2
  ps -o pid,ppid,etime,args -p "${left// /,}" >&2 || true
fi
exit "$status"
