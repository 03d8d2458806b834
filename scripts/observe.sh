#!/usr/bin/env bash
# Prometheus for the gateway on this machine (docs/operations.md): Debian's prometheus binary,
# run with our config (deploy/observe) and a data directory of its own, on its own port.
#
#   observe.sh start    copy the config and rules into the run directory, write the targets of
#                       deploy/local/services.sh's processes, start Prometheus, wait until ready
#   observe.sh stop     SIGTERM, then SIGKILL
#   observe.sh status   running or not, and the URL
#   observe.sh reload   copy the config and rules again and have Prometheus reload them
#   observe.sh targets  write the targets file of the local services only
#
# Settings: OBSERVE_PORT (19090), OBSERVE_DIR (.run/observe), OBSERVE_SCRAPE_INTERVAL (5s: also
# the rules' evaluation interval), OBSERVE_LOCAL_TARGETS (1; 0: write no targets/local.json, e.g.
# when another script lists the processes), OBSERVE_START_TIMEOUT (60 s), PROMETHEUS_BIN,
# OBSERVE_STOP_WITH_PID (a test harness's pid: Prometheus stops when that process is gone).
set -Eeuo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
# shellcheck source=../deploy/lib/stop-process.sh
source "$REPO_ROOT/deploy/lib/stop-process.sh"
# shellcheck source=../deploy/lib/wait-ready.sh
source "$REPO_ROOT/deploy/lib/wait-ready.sh"
SOURCE_DIR="$REPO_ROOT/deploy/observe"
OBSERVE_DIR="${OBSERVE_DIR:-${GW_RUN_DIR:-$REPO_ROOT/.run}/observe}"
PORT="${OBSERVE_PORT:-19090}"
SCRAPE_INTERVAL="${OBSERVE_SCRAPE_INTERVAL:-5s}"
START_TIMEOUT="${OBSERVE_START_TIMEOUT:-60}"
PROMETHEUS="${PROMETHEUS_BIN:-prometheus}"
PID_FILE="$OBSERVE_DIR/prometheus.pid"
LOG_FILE="$OBSERVE_DIR/prometheus.log"
URL="http://127.0.0.1:$PORT"
[[ "$PORT" =~ ^[0-9]+$ ]] || { echo "OBSERVE_PORT must be a port number, got '$PORT'" >&2; exit 2; }
[[ "$SCRAPE_INTERVAL" =~ ^[0-9]+(ms|s|m)$ ]] || { echo "OBSERVE_SCRAPE_INTERVAL must be a duration such as 5s, got '$SCRAPE_INTERVAL'" >&2; exit 2; }

alive() { [[ -f "$PID_FILE" ]] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null; }

need_prometheus() {
  if ! command -v "$PROMETHEUS" >/dev/null 2>&1; then
    echo "Prometheus is missing ($PROMETHEUS not found). Install Debian's package with: make prometheus" >&2
    echo "  (as root: apt-get install -y --no-install-recommends prometheus; or set PROMETHEUS_BIN)" >&2
    exit 1
  fi
}

# The config and rules as Prometheus reads them: copies in the run directory, where the config's
# relative paths (rules/*.yml, targets/*.json) resolve; the scrape and evaluation interval set.
install_config() {
  mkdir -p "$OBSERVE_DIR/targets" "$OBSERVE_DIR/data"
  rm -rf "$OBSERVE_DIR/rules"
  cp -r "$SOURCE_DIR/rules" "$OBSERVE_DIR/rules"
  sed -E "s/^(  (scrape|evaluation)_interval: ).*/\1$SCRAPE_INTERVAL/" "$SOURCE_DIR/prometheus.yml" >"$OBSERVE_DIR/prometheus.yml"
  # A timeout longer than the interval is refused; keep it under a short interval.
  local ms
  ms=$(node -e 'const m=/^(\d+)(ms|s|m)$/.exec(process.argv[1]); console.log(Number(m[1]) * ({ ms: 1, s: 1000, m: 60000 })[m[2]])' "$SCRAPE_INTERVAL")
  if (( ms < 5000 )); then sed -i -E "s/^(  scrape_timeout: ).*/\1$SCRAPE_INTERVAL/" "$OBSERVE_DIR/prometheus.yml"; fi
}

# The processes deploy/local/services.sh starts (make run), on the ports it gave them: read from
# the settings it writes (.run/local.env), else its defaults. SERVICE_REPLICAS as it reads it.
write_local_targets() {
  [[ "${OBSERVE_LOCAL_TARGETS:-1}" == 1 ]] || return 0
  local settings="${GW_RUN_DIR:-$REPO_ROOT/.run}/local.env"
  local API_PORT=18000 POLICY_PORT=18010 DELIVERY_PORT=18020 INSTANCE_EVENTS_PORT=18030 WEBHOOKS_PORT=18040
  if [[ -f "$settings" ]]; then
    local name value
    while IFS='=' read -r name value; do
      case "$name" in API_PORT|POLICY_PORT|DELIVERY_PORT|INSTANCE_EVENTS_PORT|WEBHOOKS_PORT) printf -v "$name" '%s' "$value" ;; esac
    done <"$settings"
  fi
  local replicas="${SERVICE_REPLICAS:-1}" entries=() service port_var slot process
  for pair in api:API_PORT policy:POLICY_PORT delivery:DELIVERY_PORT instance-events:INSTANCE_EVENTS_PORT webhooks:WEBHOOKS_PORT; do
    service="${pair%%:*}"; port_var="${pair#*:}"
    for (( slot=0; slot<replicas; slot++ )); do
      process="$service"; (( replicas > 1 )) && process="$service-$slot"
      entries+=("  {\"targets\": [\"127.0.0.1:$(( ${!port_var} + slot ))\"], \"labels\": {\"service\": \"$service\", \"process\": \"$process\", \"stack\": \"local\"}}")
    done
  done
  mkdir -p "$OBSERVE_DIR/targets"
  # Written whole, then renamed: Prometheus never reads half a file.
  { echo "["; (IFS=$'\n'; echo "${entries[*]}" | sed '$!s/$/,/'); echo "]"; } >"$OBSERVE_DIR/targets/.local.json.tmp"
  mv "$OBSERVE_DIR/targets/.local.json.tmp" "$OBSERVE_DIR/targets/local.json"
  echo "targets: $OBSERVE_DIR/targets/local.json (${#entries[@]} processes of deploy/local/services.sh)"
}

start() {
  need_prometheus
  install_config
  write_local_targets
  if alive; then
    if curl -fs -o /dev/null --max-time 2 "$URL/-/ready"; then
      curl -fs -o /dev/null -X POST "$URL/-/reload" || echo "prometheus: reload refused; see $LOG_FILE" >&2
      echo "prometheus: already running (pid $(cat "$PID_FILE")) $URL; config and rules reloaded"
      return 0
    fi
    wait_ready
    return 0
  fi
  rm -f "$PID_FILE"
  if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
    echo "prometheus: port $PORT is taken by another process; set OBSERVE_PORT to a free port" >&2
    exit 1
  fi
  (
    cd "$OBSERVE_DIR"
    nohup "$PROMETHEUS" \
      --config.file="$OBSERVE_DIR/prometheus.yml" \
      --storage.tsdb.path="$OBSERVE_DIR/data" \
      --storage.tsdb.retention.time="${OBSERVE_RETENTION:-7d}" \
      --web.listen-address="127.0.0.1:$PORT" \
      --web.enable-lifecycle \
      >>"$LOG_FILE" 2>&1 </dev/null &
    echo $! >"$PID_FILE"
  )
  # Started by a test harness (as the services get STOP_WITH_PARENT_PID): should the harness die
  # without stopping it, Prometheus is stopped within a second, so nothing is left running.
  if [[ -n "${OBSERVE_STOP_WITH_PID:-}" ]]; then
    local prometheus_pid harness="$OBSERVE_STOP_WITH_PID"
    prometheus_pid="$(cat "$PID_FILE")"
    nohup bash -c 'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done; kill -TERM "$2" 2>/dev/null' _ "$harness" "$prometheus_pid" >/dev/null 2>&1 </dev/null &
  fi
  wait_ready
}

wait_ready() {
  wait_until_ready prometheus "$URL/-/ready" "$PID_FILE" "$LOG_FILE" "$START_TIMEOUT" || exit 1
  echo "prometheus: ready (pid $(cat "$PID_FILE")) $URL  (targets: $URL/targets, alerts: $URL/alerts, log $LOG_FILE)"
}

stop() {
  if ! alive; then
    rm -f "$PID_FILE"
    echo "prometheus: not running"
    return 0
  fi
  stop_pidfile prometheus "$PID_FILE"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status)
    if alive; then echo "prometheus: running (pid $(cat "$PID_FILE")) $URL"; else echo "prometheus: stopped"; exit 3; fi
    ;;
  reload)
    need_prometheus
    install_config
    alive || { echo "prometheus: not running (start it with make observe)" >&2; exit 1; }
    curl -fsS -X POST "$URL/-/reload" && echo "prometheus: config and rules reloaded"
    ;;
  targets) write_local_targets ;;
  *)
    echo "usage: $0 start|stop|status|reload|targets" >&2
    exit 2
    ;;
esac
