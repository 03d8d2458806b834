# Sourced by the start scripts (deploy/local/services.sh, deploy/cluster/kafka-cluster.sh,
# scripts/observe.sh): one way to stop a process we started from its pid file.

# stop_pidfile <name> <pid file> [grace seconds]: SIGTERM (a graceful stop: in-flight work
# finishes), SIGKILL once the grace is over; removes the pid file; says so when it stopped one.
stop_pidfile() {
  local name="$1" pidfile="$2" grace="${3:-30}" pid
  pid="$(cat "$pidfile" 2>/dev/null || true)"
  if [[ -z "$pid" ]] || ! kill -0 "$pid" 2>/dev/null; then
    rm -f "$pidfile"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  local waited=0
  while kill -0 "$pid" 2>/dev/null && (( waited < grace * 2 )); do
    sleep 0.5
    waited=$((waited + 1))
  done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  rm -f "$pidfile"
  echo "$name: stopped"
}
