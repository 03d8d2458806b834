# Sourced by the start scripts (deploy/local/services.sh, scripts/observe.sh): one way to wait
# for a process we started to answer its readiness URL.

# wait_until_ready <name> <ready url> <pid file> <log file> <timeout seconds> [hint]: polls the URL
# once a second; fails with the log's last lines when the process exits or the time is over
# (the hint, when given, says what to check when the process exited).
wait_until_ready() {
  local name="$1" url="$2" pidfile="$3" log="$4" timeout="$5" hint="${6:-}" waited=0
  until curl -fs -o /dev/null --max-time 2 "$url"; do
    if ! { [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }; then
      echo "$name: exited during start. Last log lines ($log):" >&2
      tail -n 30 "$log" >&2
      [[ -n "$hint" ]] && echo "Hint: $hint" >&2
      return 1
    fi
    if (( waited >= timeout )); then
      echo "$name: not ready after ${timeout}s ($url). Last log lines ($log):" >&2
      tail -n 30 "$log" >&2
      return 1
    fi
    sleep 1
    waited=$((waited + 1))
  done
}
