#!/usr/bin/env bash
# Starts, stops and reports the gateway's own processes for local runs:
# the instance simulator, the API, and the policy, delivery, instance-events and webhooks consumers.
#
#   services.sh start    start (or reuse) every service and wait until each is ready
#   services.sh stop     SIGTERM (graceful: in-flight work finishes, offsets commit), then SIGKILL
#   services.sh status   state and URL of each service
#
# SERVICE_REPLICAS=2 starts two processes of the API and of every consumer stage (make cluster):
# process i is named <service>-<i>, listens on the service's port + i and is slot i of its
# consumer group (CONSUMER_INSTANCE_ID, part of its transactional id). The simulator stays one.
set -Eeuo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
RUN_DIR="${GW_RUN_DIR:-$REPO_ROOT/.run}/services"
START_TIMEOUT="${SERVICES_START_TIMEOUT:-90}"
REPLICAS="${SERVICE_REPLICAS:-1}"
[[ "$REPLICAS" =~ ^[1-9]$ ]] || { echo "SERVICE_REPLICAS must be 1..9, got '$REPLICAS'" >&2; exit 2; }

export API_PORT="${API_PORT:-18000}" POLICY_PORT="${POLICY_PORT:-18010}" DELIVERY_PORT="${DELIVERY_PORT:-18020}" INSTANCE_EVENTS_PORT="${INSTANCE_EVENTS_PORT:-18030}" WEBHOOKS_PORT="${WEBHOOKS_PORT:-18040}" SIM_PORT="${SIM_PORT:-18090}"

# The mail catcher (maildev: an SMTP server and a web inbox, docs/dashboard.md "Mail"): the API
# sends every verification link, reset link and notice to it; nothing leaves the machine.
export MAIL_SMTP_PORT="${MAIL_SMTP_PORT:-1025}" MAIL_WEB_PORT="${MAIL_WEB_PORT:-1080}"
export SMTP_URL="${SMTP_URL:-smtp://127.0.0.1:$MAIL_SMTP_PORT}"

# Local runs post customer webhooks to receivers on this machine (the simulator's inbox, plain
# http); production leaves the allowlist empty and http closed (https only by default).
export WEBHOOK_ALLOW_CIDRS="${WEBHOOK_ALLOW_CIDRS-127.0.0.0/8}"
export WEBHOOK_ALLOW_HTTP="${WEBHOOK_ALLOW_HTTP-true}"

# name | entry point | the variable holding its port | readiness path | replicated
SERVICE_DEFS=(
  "instance-simulator|services/instance-simulator/src/main.ts|SIM_PORT|/sim/health|no"
  "policy|services/policy/src/main.ts|POLICY_PORT|/readyz|yes"
  "delivery|services/delivery/src/main.ts|DELIVERY_PORT|/readyz|yes"
  "instance-events|services/instance-events/src/main.ts|INSTANCE_EVENTS_PORT|/readyz|yes"
  "webhooks|services/webhooks/src/main.ts|WEBHOOKS_PORT|/readyz|yes"
  "api|services/api/src/main.ts|API_PORT|/readyz|yes"
)
# One line per process: name | entry point | port variable | port | slot | readiness URL
SERVICES=()
for def in "${SERVICE_DEFS[@]}"; do
  IFS='|' read -r name main port_var path replicated <<<"$def"
  count=1; [[ "$replicated" == yes ]] && count="$REPLICAS"
  for (( slot=0; slot<count; slot++ )); do
    port=$(( ${!port_var} + slot ))
    process="$name"; (( count > 1 )) && process="$name-$slot"
    SERVICES+=("$process|$main|$port_var|$port|$slot|http://127.0.0.1:$port$path")
  done
done

mkdir -p "$RUN_DIR"

# Secrets at rest are sealed with one key that every service shares (docs/decisions.md, "Secrets
# at rest"). Local runs keep it in a key file created here, once, before any service starts; the
# services only read it (GATEWAY_ENV=local) and refuse to start without it. GATEWAY_SECRET_KEY,
# when set, is used instead.
export GATEWAY_ENV=local
export GATEWAY_SECRET_KEY_FILE="${GATEWAY_SECRET_KEY_FILE:-$REPO_ROOT/.run/secret.key}"
ensure_secret_key() {
  [[ -e "$GATEWAY_SECRET_KEY_FILE" ]] && return 0
  mkdir -p "$(dirname "$GATEWAY_SECRET_KEY_FILE")"
  # noclobber: a concurrent start that created it first keeps its key.
  if (umask 077; set -o noclobber; head -c 32 /dev/urandom | base64 >"$GATEWAY_SECRET_KEY_FILE") 2>/dev/null; then
    chmod 600 "$GATEWAY_SECRET_KEY_FILE"
    echo "secret key: created $GATEWAY_SECRET_KEY_FILE (mode 0600)"
  fi
}

# The settings of this local stack, for gatewayctl run by hand (it reads this file when
# GATEWAY_ENV is not set; libs/config withLocalSettings): the same key file, destinations and ports.
LOCAL_SETTINGS="${GW_RUN_DIR:-$REPO_ROOT/.run}/local.env"
write_local_settings() {
  {
    echo "# Written by deploy/local/services.sh start: the settings of the local stack, read by gatewayctl."
    for name in GATEWAY_ENV GATEWAY_SECRET_KEY_FILE WEBHOOK_ALLOW_CIDRS WEBHOOK_ALLOW_HTTP API_PORT POLICY_PORT DELIVERY_PORT INSTANCE_EVENTS_PORT WEBHOOKS_PORT SIM_PORT; do
      echo "$name=${!name}"
    done
  } >"$LOCAL_SETTINGS"
}

alive() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

start_one() {
  local name="$1" entry="$2" port_var="$3" port="$4" slot="$5" ready="$6" pid="$RUN_DIR/$1.pid" log="$RUN_DIR/$1.log"
  if alive "$pid" && curl -fs -o /dev/null --max-time 2 "$ready"; then
    echo "$name: already running (pid $(cat "$pid"))"
    return 0
  fi
  if [[ -f "$pid" ]]; then
    kill "$(cat "$pid")" 2>/dev/null || true
    rm -f "$pid"
  fi
  # The service itself is the background job (no shell in between): its pid is the one we stop,
  # and it holds none of the caller's file descriptors.
  (
    cd "$REPO_ROOT"
    # A larger young generation: the services allocate many short-lived objects per record.
    export "$port_var=$port" CONSUMER_INSTANCE_ID="$slot"
    nohup node --max-semi-space-size=32 --import tsx "$entry" >>"$log" 2>&1 </dev/null &
    echo $! >"$pid"
  )
  wait_until_ready "$name" "$ready" "$pid" "$log" "$START_TIMEOUT" "is the infrastructure up? Run 'bash deploy/local/infra.sh status'." || return 1
  echo "$name: ready (pid $(cat "$pid"), log $log)"
}

# The catcher is a plain node process of its own (maildev's bin), health-waited on its REST API.
start_mail_catcher() {
  local pid="$RUN_DIR/mail-catcher.pid" log="$RUN_DIR/mail-catcher.log" ready="http://127.0.0.1:$MAIL_WEB_PORT/api/healthz"
  if alive "$pid" && curl -fs -o /dev/null --max-time 2 "$ready"; then echo "mail-catcher: already running (pid $(cat "$pid"))"; return 0; fi
  rm -f "$pid"
  (
    cd "$REPO_ROOT"
    nohup node node_modules/maildev/dist/bin/maildev.js --smtp "$MAIL_SMTP_PORT" --ip 127.0.0.1 --web "$MAIL_WEB_PORT" --web-ip 127.0.0.1 --silent >>"$log" 2>&1 </dev/null &
    echo $! >"$pid"
  )
  wait_until_ready mail-catcher "$ready" "$pid" "$log" "$START_TIMEOUT" "is port $MAIL_SMTP_PORT or $MAIL_WEB_PORT taken? Set MAIL_SMTP_PORT / MAIL_WEB_PORT." || return 1
  echo "mail-catcher: ready (pid $(cat "$pid"), inbox http://127.0.0.1:$MAIL_WEB_PORT)"
}

# shellcheck source=../lib/stop-process.sh
source "$REPO_ROOT/deploy/lib/stop-process.sh"
# shellcheck source=../lib/wait-ready.sh
source "$REPO_ROOT/deploy/lib/wait-ready.sh"
stop_one() { stop_pidfile "$1" "$RUN_DIR/$1.pid"; }

case "${1:-}" in
  start)
    ensure_secret_key
    write_local_settings
    start_mail_catcher
    for entry in "${SERVICES[@]}"; do
      IFS='|' read -r name main port_var port slot ready <<<"$entry"
      start_one "$name" "$main" "$port_var" "$port" "$slot" "$ready"
    done
    ;;
  stop)
    # Reverse order: the API stops taking requests before the consumers go. Every process of a
    # service that has a pid file is stopped, however many SERVICE_REPLICAS the start had.
    for (( i=${#SERVICE_DEFS[@]}-1; i>=0; i-- )); do
      IFS='|' read -r name _ <<<"${SERVICE_DEFS[$i]}"
      for pidfile in "$RUN_DIR/$name.pid" "$RUN_DIR/$name"-[0-9].pid; do
        if [[ -e "$pidfile" ]]; then stop_one "$(basename "$pidfile" .pid)"; fi
      done
    done
    # The catcher last: the API may still send a notice while it stops.
    if [[ -e "$RUN_DIR/mail-catcher.pid" ]]; then stop_one mail-catcher; fi
    ;;
  status)
    for entry in "${SERVICES[@]}"; do
      IFS='|' read -r name _ _ _ _ ready <<<"$entry"
      if alive "$RUN_DIR/$name.pid"; then echo "$name: running (pid $(cat "$RUN_DIR/$name.pid")) $ready"; else echo "$name: stopped"; fi
    done
    if alive "$RUN_DIR/mail-catcher.pid"; then echo "mail-catcher: running (pid $(cat "$RUN_DIR/mail-catcher.pid")) http://127.0.0.1:$MAIL_WEB_PORT"; else echo "mail-catcher: stopped"; fi
    ;;
  *)
    echo "usage: $0 start|stop|status" >&2
    exit 2
    ;;
esac
