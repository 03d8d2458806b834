#!/usr/bin/env bash
# Local infrastructure for the chat gateway: a single-node KRaft Kafka broker and
# Apicurio Registry 3 (Confluent-compatible API, stored in the local PostgreSQL).
#
#   infra.sh fetch                          download Kafka + Apicurio into the cache (idempotent)
#   infra.sh start  [kafka|registry|all]    start (or reuse) and wait until healthy   (default: all)
#   infra.sh stop   [kafka|registry|all]    SIGTERM, wait, SIGKILL                    (default: all)
#   infra.sh status                         state + URLs; exit 0 only if everything is up
#   infra.sh logs   [kafka|registry|all] [-f]
#   infra.sh reset  [kafka|registry|all]    stop, then wipe Kafka data / drop the registry DB
#
# See deploy/local/README.md for the environment variables.
set -Eeuo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"

# ---------------------------------------------------------------- configuration
KAFKA_VERSION=3.9.2
REGISTRY_VERSION=3.3.3
REGISTRY_ARTIFACT="io.apicurio:apicurio-registry-app:${REGISTRY_VERSION}:tar.gz:all"

CACHE_DIR="${GW_CACHE_DIR:-$REPO_ROOT/.cache}"
RUN_DIR="${GW_RUN_DIR:-$REPO_ROOT/.run}/infra"
LOG_DIR="$RUN_DIR/logs"

KAFKA_HOME="$CACHE_DIR/kafka-$KAFKA_VERSION"
KAFKA_LIBS="$KAFKA_HOME/libs"
REGISTRY_HOME="$CACHE_DIR/apicurio-registry-$REGISTRY_VERSION"
FETCH_MARKER=".fetch-complete"

KAFKA_HOST=127.0.0.1
KAFKA_PORT="${KAFKA_PORT:-19092}"
KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-19093}"
KAFKA_RUN="$RUN_DIR/kafka"
KAFKA_DATA="${KAFKA_DATA_DIR:-$KAFKA_RUN/data}"
KAFKA_PID="$RUN_DIR/kafka.pid"
KAFKA_STATE="$RUN_DIR/kafka.state"
KAFKA_LOG="$LOG_DIR/kafka.log"
KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xms256m -Xmx768m}"
KAFKA_JVM_OPTS="${KAFKA_JVM_OPTS:--XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError -XX:-UsePerfData -Djava.awt.headless=true}"

REGISTRY_HOST=127.0.0.1
REGISTRY_PORT="${REGISTRY_PORT:-18081}"
REGISTRY_MGMT_PORT="${REGISTRY_MGMT_PORT:-18082}"
REGISTRY_DB="${REGISTRY_DB:-apicurio}"
REGISTRY_DB_HOST="${REGISTRY_DB_HOST:-127.0.0.1}"
REGISTRY_DB_PORT="${REGISTRY_DB_PORT:-5432}"
REGISTRY_DB_USER="${REGISTRY_DB_USER:-postgres}"
# trust auth ignores it, but Quarkus treats an empty value as "missing", so keep a dummy
REGISTRY_DB_PASSWORD="${REGISTRY_DB_PASSWORD:-postgres}"
REGISTRY_RUN="$RUN_DIR/registry"
REGISTRY_PID="$RUN_DIR/registry.pid"
REGISTRY_STATE="$RUN_DIR/registry.state"
REGISTRY_LOG="$LOG_DIR/registry.log"
REGISTRY_HEAP_OPTS="${REGISTRY_HEAP_OPTS:--Xms64m -Xmx512m}"
REGISTRY_JVM_OPTS="${REGISTRY_JVM_OPTS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError -XX:-UsePerfData}"
REGISTRY_EXTRA_OPTS="${REGISTRY_EXTRA_OPTS:-}"

START_TIMEOUT="${INFRA_START_TIMEOUT:-120}"
STOP_TIMEOUT="${INFRA_STOP_TIMEOUT:-30}"
INFRA_MVN_ARGS="${INFRA_MVN_ARGS:-}"

# ---------------------------------------------------------------- helpers
info() { printf '[infra] %s\n' "$*" >&2; }
warn() { printf '[infra] WARNING: %s\n' "$*" >&2; }
die()  { printf '[infra] ERROR: %s\n' "$*" >&2; exit 1; }
now()  { date +%s; }

kafka_url()    { echo "$KAFKA_HOST:$1"; }
registry_url() { echo "http://$REGISTRY_HOST:$1/apis/ccompat/v7"; }
registry_health_url() { echo "http://$REGISTRY_HOST:$1/health/ready"; }

# is anything listening on 127.0.0.1:$1 ?
port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }
port_owner() {
  if command -v ss >/dev/null 2>&1; then
    ss -Hltnp "sport = :$1" 2>/dev/null | sed -n 's/.*users:((\(.*\)))/\1/p' | head -1
  fi
}

java_major() { # prints the major version of the given java binary (8 for 1.8)
  local v
  v="$("$1" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -1)" || true
  [[ -n "$v" ]] || { echo 0; return; }
  if [[ "$v" == 1.* ]]; then v="${v#1.}"; fi
  echo "${v%%[.+-]*}"
}

# Kafka runs on the default `java` (17+). Apicurio Registry 3.3.x is compiled for
# Java 21 (class file 65), so it needs a 21+ runtime: REGISTRY_JAVA_HOME, $JAVA_HOME,
# `java` on PATH, or any JDK under /usr/lib/jvm, first one that is >= 21 wins.
find_kafka_java() {
  local j
  if [[ -n "${KAFKA_JAVA_HOME:-}" ]]; then j="$KAFKA_JAVA_HOME/bin/java"
  else j="$(command -v java || true)"; fi
  [[ -n "$j" && -x "$j" ]] || die "java not found: apt-get install -y openjdk-17-jre-headless (or set KAFKA_JAVA_HOME)"
  (( $(java_major "$j") >= 17 )) || die "$j is Java $(java_major "$j"); Kafka $KAFKA_VERSION here needs 17+: apt-get install -y openjdk-17-jre-headless (or set KAFKA_JAVA_HOME)"
  echo "$j"
}
find_registry_java() {
  local c
  if [[ -n "${REGISTRY_JAVA_HOME:-}" ]]; then
    c="$REGISTRY_JAVA_HOME/bin/java"
    [[ -x "$c" ]] || die "REGISTRY_JAVA_HOME=$REGISTRY_JAVA_HOME has no bin/java"
    (( $(java_major "$c") >= 21 )) || die "REGISTRY_JAVA_HOME points at Java $(java_major "$c"); Apicurio Registry $REGISTRY_VERSION needs Java 21+"
    echo "$c"; return
  fi
  local cands=()
  [[ -n "${JAVA_HOME:-}" ]] && cands+=("$JAVA_HOME/bin/java")
  command -v java >/dev/null 2>&1 && cands+=("$(command -v java)")
  local d; for d in /usr/lib/jvm/*/bin/java; do [[ -x "$d" ]] && cands+=("$d"); done
  for c in "${cands[@]}"; do
    if [[ -x "$c" ]] && (( $(java_major "$c") >= 21 )); then echo "$c"; return; fi
  done
  die "no Java 21+ runtime found (Apicurio Registry $REGISTRY_VERSION is built for Java 21; the default java is $(java_major "$(command -v java || echo java)")).
        Fix: install a JDK 21+ (e.g. Temurin 21/25 under /usr/lib/jvm) and/or set REGISTRY_JAVA_HOME=/path/to/jdk21+."
}

need_cmd() { # need_cmd <cmd> <how to fix>
  command -v "$1" >/dev/null 2>&1 || die "$1 not found: $2"
}
check_prereqs() { # check_prereqs <what> ...
  local w
  for w in "$@"; do
    case "$w" in
      mvn)  need_cmd mvn  "apt-get install -y maven (Maven Central must be reachable)";;
      curl) need_cmd curl "apt-get install -y curl";;
      psql) need_cmd psql "apt-get install -y postgresql-client";;
      tar)  need_cmd tar  "apt-get install -y tar";;
      java) find_kafka_java >/dev/null;;
    esac
  done
  need_cmd timeout "apt-get install -y coreutils"
  need_cmd setsid  "apt-get install -y util-linux"
  need_cmd flock   "apt-get install -y util-linux"
}

lock() { # serialize start/stop/reset across concurrent invocations (e.g. parallel test jobs)
  mkdir -p "$RUN_DIR"
  exec 9>"$RUN_DIR/.lock"
  flock -w 600 9 || die "could not lock $RUN_DIR/.lock (another infra.sh is running?)"
}

# ------------------------------------------------------------- process helpers
read_pid() { [[ -f "$1" ]] && tr -dc '0-9' <"$1" || true; }
# a pid counts as ours only if it is alive and its command line carries our marker
pid_is_ours() { # pid_is_ours <pid> <component>
  local pid="$1" comp="$2"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "-Dgw.infra.component=$comp -Dgw.infra.run=$RUN_DIR "
}
comp_pid_running() { # prints pid if the component's pid file points at a live process of ours
  local pidf comp="$1"; pidf="$(pidfile "$comp")"
  local pid; pid="$(read_pid "$pidf")"
  if pid_is_ours "$pid" "$comp"; then echo "$pid"; return 0; fi
  return 1
}
pidfile() { case "$1" in kafka) echo "$KAFKA_PID";; registry) echo "$REGISTRY_PID";; esac; }
logfile() { case "$1" in kafka) echo "$KAFKA_LOG";; registry) echo "$REGISTRY_LOG";; esac; }
statefile() { case "$1" in kafka) echo "$KAFKA_STATE";; registry) echo "$REGISTRY_STATE";; esac; }
state_get() { # state_get <component> <KEY>  (values recorded at launch time)
  local f; f="$(statefile "$1")"
  [[ -f "$f" ]] && sed -n "s/^$2=//p" "$f" | head -1 || true
}

# launch <component> <workdir> <cmd...>: detached (own session, nohup), stdout+stderr to
# the component log, pid file written by the process itself just before exec.
launch() {
  local comp="$1" wd="$2"; shift 2
  local pidf log; pidf="$(pidfile "$comp")"; log="$(logfile "$comp")"
  mkdir -p "$LOG_DIR" "$wd"
  [[ -f "$log" ]] && mv -f "$log" "$log.prev"
  printf '===== %s start %s =====\n%s\n' "$comp" "$(date -Is)" "$*" >"$log"
  rm -f "$pidf"
  # every step execs, so the async subshell *becomes* the JVM (no lingering bash that would
  # keep the lock fd or the caller's pipes open); fds 8/9 (our locks) are closed for it.
  ( cd "$wd" && exec nohup setsid bash -c 'echo $$ >"$0"; exec "$@"' "$pidf" "$@" >>"$log" 2>&1 </dev/null 8>&- 9>&- ) &
  local i; for i in $(seq 1 50); do [[ -s "$pidf" ]] && return 0; sleep 0.1; done
  die "$comp did not write its pid file $pidf"
}

stop_comp() { # stop_comp <component>
  local comp="$1" pidf pid; pidf="$(pidfile "$comp")"
  pid="$(read_pid "$pidf")"
  if [[ -z "$pid" ]]; then info "$comp: not running (no pid file)"; rm -f "$pidf"; return 0; fi
  if ! pid_is_ours "$pid" "$comp"; then
    info "$comp: stale pid file (pid $pid is not our $comp) - removed"; rm -f "$pidf"; return 0
  fi
  info "$comp: stopping pid $pid (SIGTERM, up to ${STOP_TIMEOUT}s)"
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$(( $(now) + STOP_TIMEOUT ))
  while kill -0 "$pid" 2>/dev/null && (( $(now) < deadline )); do sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then
    warn "$comp: pid $pid still alive after ${STOP_TIMEOUT}s - SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    local i; for i in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  fi
  rm -f "$pidf"
  info "$comp: stopped"
}

# print the tail of the log plus a concrete hint, stop what we started, exit non-zero
fail_start() { # fail_start <component> <message>
  local comp="$1" msg="$2" log hint=""; log="$(logfile "$comp")"
  # skip the 2 header lines (they hold the command line, e.g. -XX:+ExitOnOutOfMemoryError)
  log_has() { tail -n +3 "$log" | grep -iE -- "$1" >/dev/null; }
  {
    echo "[infra] ERROR: $comp failed to start: $msg"
    if [[ -f "$log" ]]; then echo "----- last 40 lines of $log -----"; tail -n 40 "$log"; echo "-----"; fi
  } >&2
  if [[ -f "$log" ]]; then
    if log_has 'Address already in use'; then
      if [[ "$comp" == kafka ]]; then hint="a port is already in use: set KAFKA_PORT / KAFKA_CONTROLLER_PORT (now $KAFKA_PORT / $KAFKA_CONTROLLER_PORT) or stop the other process"
      else hint="a port is already in use: set REGISTRY_PORT / REGISTRY_MGMT_PORT (now $REGISTRY_PORT / $REGISTRY_MGMT_PORT) or stop the other process"; fi
    elif log_has 'UnsupportedClassVersionError'; then
      hint="the Java runtime is too old: Kafka needs 17+, Apicurio Registry $REGISTRY_VERSION needs 21+ (set KAFKA_JAVA_HOME / REGISTRY_JAVA_HOME)"
    elif log_has 'java.lang.OutOfMemoryError|Cannot allocate memory|Could not reserve enough space'; then
      hint="out of memory: lower/raise ${comp^^}_HEAP_OPTS or free memory on the machine"
    elif log_has 'InconsistentClusterIdException|Invalid cluster.id|No meta.properties|NoSuchFileException.*meta.properties'; then
      hint="the Kafka data dir $KAFKA_DATA belongs to another cluster or is damaged: run '$0 reset kafka' (or point KAFKA_DATA_DIR at an empty dir)"
    elif log_has 'Transient database connection failure|Connection to .* refused|PSQLException|Acquisition timeout|password authentication failed|database .* does not exist'; then
      hint="postgres not usable at $REGISTRY_DB_HOST:$REGISTRY_DB_PORT (db $REGISTRY_DB, user $REGISTRY_DB_USER): start it with 'pg_ctlcluster 15 main start' (or 'service postgresql start') and check with: psql -h $REGISTRY_DB_HOST -p $REGISTRY_DB_PORT -U $REGISTRY_DB_USER -d $REGISTRY_DB -c 'select 1'"
    fi
  fi
  if [[ -z "$hint" ]]; then
    if [[ "$msg" == *"timed out"* ]]; then
      hint="still not healthy after ${START_TIMEOUT}s: the machine may be busy; retry with a larger INFRA_START_TIMEOUT, and read the full log: $0 logs $comp"
    else
      hint="read the full log ($log) or run: $0 logs $comp"
    fi
  fi
  echo "[infra] HINT: $hint" >&2
  local STOP_TIMEOUT=5   # it is broken anyway: do not wait long before SIGKILL
  stop_comp "$comp" >/dev/null 2>&1 || true
  echo "[infra] $comp was stopped; fix the cause and run '$0 start $comp' again" >&2
  exit 1
}

# ---------------------------------------------------------------- fetch
run_mvn() { # run_mvn <args...>  (quiet, batch; INFRA_MVN_ARGS e.g. -Dmaven.repo.local=...)
  # shellcheck disable=SC2086
  # (Maven 3.8 emits bare ESC[0m resets even in batch mode; strip them, keep the exit status)
  mvn -q -B -Dstyle.color=never $INFRA_MVN_ARGS -f "$SCRIPT_DIR/kafka-dist/pom.xml" "$@" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2
}

fetch_kafka() {
  if [[ -f "$KAFKA_HOME/$FETCH_MARKER" ]]; then info "kafka $KAFKA_VERSION: cached in $KAFKA_HOME"; return 0; fi
  info "kafka $KAFKA_VERSION: fetching jars from Maven Central into $KAFKA_HOME"
  local tmp="$KAFKA_HOME.partial"
  rm -rf "$tmp" "$KAFKA_HOME"; mkdir -p "$tmp/libs"
  run_mvn dependency:copy-dependencies -DoutputDirectory="$tmp/libs" -DincludeScope=runtime \
    || die "maven could not fetch Kafka $KAFKA_VERSION (is Maven Central reachable? see output above)"
  [[ -f "$tmp/libs/kafka_2.13-$KAFKA_VERSION.jar" && -f "$tmp/libs/kafka-tools-$KAFKA_VERSION.jar" ]] \
    || die "kafka jars missing after fetch in $tmp/libs"
  mv "$tmp" "$KAFKA_HOME"
  echo "kafka $KAFKA_VERSION fetched $(date -Is)" >"$KAFKA_HOME/$FETCH_MARKER"
  info "kafka $KAFKA_VERSION: $(ls "$KAFKA_LIBS" | wc -l) jars ready"
}

fetch_registry() {
  if [[ -f "$REGISTRY_HOME/$FETCH_MARKER" ]]; then info "apicurio registry $REGISTRY_VERSION: cached in $REGISTRY_HOME"; return 0; fi
  info "apicurio registry $REGISTRY_VERSION: fetching $REGISTRY_ARTIFACT"
  local tmp="$REGISTRY_HOME.partial" dl="$CACHE_DIR/.download-registry"
  rm -rf "$tmp" "$dl" "$REGISTRY_HOME"; mkdir -p "$tmp" "$dl"
  run_mvn dependency:copy -Dartifact="$REGISTRY_ARTIFACT" -DoutputDirectory="$dl" \
    || die "maven could not fetch $REGISTRY_ARTIFACT (is Maven Central reachable? see output above)"
  local tgz; tgz="$(ls "$dl"/*.tar.gz 2>/dev/null | head -1)"
  [[ -n "$tgz" ]] || die "no tarball downloaded into $dl"
  tar -xzf "$tgz" -C "$tmp" || die "could not unpack $tgz (corrupt download? delete ~/.m2/repository/io/apicurio/apicurio-registry-app/$REGISTRY_VERSION and retry)"
  [[ -f "$tmp/quarkus-run.jar" ]] || die "unexpected tarball layout: $tmp/quarkus-run.jar missing"
  rm -rf "$dl"
  mv "$tmp" "$REGISTRY_HOME"
  echo "apicurio-registry-app $REGISTRY_VERSION fetched $(date -Is)" >"$REGISTRY_HOME/$FETCH_MARKER"
  info "apicurio registry $REGISTRY_VERSION: ready"
}

cmd_fetch() {
  check_prereqs mvn tar
  mkdir -p "$CACHE_DIR"
  exec 8>"$CACHE_DIR/.fetch.lock"; flock -w 900 8 || die "could not lock $CACHE_DIR/.fetch.lock"
  fetch_kafka
  fetch_registry
  exec 8>&-
}
ensure_fetched() { # fetch on demand so `start` works on a clean machine
  if [[ ! -f "$KAFKA_HOME/$FETCH_MARKER" || ! -f "$REGISTRY_HOME/$FETCH_MARKER" ]]; then
    info "distribution not in cache yet - running fetch"
    cmd_fetch
  fi
}

# ---------------------------------------------------------------- kafka
kafka_tool() { # kafka_tool <main class> <args...>   (short-lived admin JVM, killed after 60 s)
  local java; java="$(find_kafka_java)"
  timeout "${KAFKA_TOOL_TIMEOUT:-60}" "$java" -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData \
    -Dlog4j.configuration="file:$KAFKA_RUN/tools-log4j.properties" \
    -cp "$KAFKA_LIBS/*" "$@"
}

kafka_write_config() {
  mkdir -p "$KAFKA_RUN" "$KAFKA_DATA" "$LOG_DIR"
  cat >"$KAFKA_RUN/server.properties" <<EOF
# generated by deploy/local/infra.sh on $(date -Is) - do not edit, it is rewritten on every start
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$KAFKA_HOST:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://$KAFKA_HOST:$KAFKA_PORT,CONTROLLER://$KAFKA_HOST:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://$KAFKA_HOST:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$KAFKA_DATA

# single node: every replication factor is 1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.num.partitions=10
transaction.state.log.num.partitions=10

num.partitions=6
auto.create.topics.enable=false
delete.topic.enable=true
group.initial.rebalance.delay.ms=0

# lean on a 2-core machine
num.network.threads=2
num.io.threads=4
num.recovery.threads.per.data.dir=1
background.threads=4
log.cleaner.threads=1
log.retention.hours=24
log.segment.bytes=104857600
EOF
  if [[ -n "${KAFKA_EXTRA_PROPERTIES:-}" ]]; then
    printf '\n# from KAFKA_EXTRA_PROPERTIES\n%s\n' "$KAFKA_EXTRA_PROPERTIES" >>"$KAFKA_RUN/server.properties"
  fi
  cat >"$KAFKA_RUN/log4j.properties" <<'EOF'
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka=INFO
log4j.logger.org.apache.kafka=INFO
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.request.logger=WARN
log4j.logger.kafka.log.LogCleaner=WARN
log4j.logger.org.apache.kafka.clients=WARN
log4j.logger.org.apache.kafka.common.utils.AppInfoParser=WARN
EOF
  cat >"$KAFKA_RUN/tools-log4j.properties" <<'EOF'
log4j.rootLogger=WARN, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.org.apache.kafka.clients.NetworkClient=ERROR
EOF
}

kafka_format_if_needed() {
  local cid_file="$KAFKA_RUN/cluster-id" cid
  if [[ ! -s "$cid_file" ]]; then
    cid="$(kafka_tool kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1 | tr -d '[:space:]')"
    [[ "$cid" =~ ^[A-Za-z0-9_-]{22}$ ]] || die "could not generate a Kafka cluster id (got '$cid')"
    echo "$cid" >"$cid_file"
    info "kafka: generated cluster id $cid ($cid_file)"
  fi
  cid="$(tr -d '[:space:]' <"$cid_file")"
  if [[ -f "$KAFKA_DATA/meta.properties" ]]; then
    local have; have="$(sed -n 's/^cluster.id=//p' "$KAFKA_DATA/meta.properties")"
    if [[ -n "$have" && "$have" != "$cid" ]]; then
      warn "kafka: $KAFKA_DATA is formatted for cluster $have (not $cid) - using it as is"
    fi
    info "kafka: storage in $KAFKA_DATA already formatted - not formatting"
    return 0
  fi
  info "kafka: formatting storage in $KAFKA_DATA (cluster id $cid)"
  kafka_tool kafka.tools.StorageTool format -t "$cid" -c "$KAFKA_RUN/server.properties" --ignore-formatted >"$LOG_DIR/kafka-format.log" 2>&1 \
    || { tail -n 40 "$LOG_DIR/kafka-format.log" >&2; die "kafka storage format failed (see above)"; }
}

kafka_healthy() { # kafka_healthy <port>: TCP connect, then a real metadata round trip
  port_open "$1" || return 1
  KAFKA_TOOL_TIMEOUT=30 kafka_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$KAFKA_HOST:$1" --list >/dev/null 2>&1
}

start_kafka_launch() { # returns 0 if already running+healthy (sets KAFKA_REUSED=1)
  KAFKA_REUSED=0
  local pid java
  if pid="$(comp_pid_running kafka)"; then
    local rport; rport="$(state_get kafka PORT)"; rport="${rport:-$KAFKA_PORT}"
    if [[ "$rport" != "$KAFKA_PORT" ]]; then
      die "kafka is already running (pid $pid) on port $rport, but KAFKA_PORT=$KAFKA_PORT was requested: run '$0 stop kafka' first"
    fi
    local rdata; rdata="$(state_get kafka DATA_DIR)"
    [[ -n "$rdata" && "$rdata" != "$KAFKA_DATA" ]] && warn "kafka is running with data dir $rdata (KAFKA_DATA_DIR=$KAFKA_DATA ignored until restart)"
    info "kafka: already running (pid $pid) - reusing"
    KAFKA_REUSED=1
    return 0
  fi
  if [[ -f "$KAFKA_PID" ]]; then info "kafka: removing stale pid file ($(read_pid "$KAFKA_PID"))"; rm -f "$KAFKA_PID"; fi
  java="$(find_kafka_java)"
  local p; for p in "$KAFKA_PORT" "$KAFKA_CONTROLLER_PORT"; do
    if port_open "$p"; then
      local owner; owner="$(port_owner "$p" || true)"
      die "port $p on 127.0.0.1 is already in use${owner:+ by $owner}: set KAFKA_PORT / KAFKA_CONTROLLER_PORT (now $KAFKA_PORT / $KAFKA_CONTROLLER_PORT) or stop that process"
    fi
  done
  kafka_write_config
  kafka_format_if_needed
  printf 'PORT=%s\nCONTROLLER_PORT=%s\nDATA_DIR=%s\n' "$KAFKA_PORT" "$KAFKA_CONTROLLER_PORT" "$KAFKA_DATA" >"$KAFKA_STATE"
  # shellcheck disable=SC2086
  launch kafka "$KAFKA_RUN" "$java" $KAFKA_HEAP_OPTS $KAFKA_JVM_OPTS \
    -Dgw.infra.component=kafka -Dgw.infra.run="$RUN_DIR" \
    -Dlog4j.configuration="file:$KAFKA_RUN/log4j.properties" \
    -Dkafka.logs.dir="$LOG_DIR" \
    -cp "$KAFKA_LIBS/*" kafka.Kafka "$KAFKA_RUN/server.properties"
  info "kafka: launched pid $(read_pid "$KAFKA_PID") (log $KAFKA_LOG)"
}

start_kafka_wait() {
  local t0; t0=$(now)
  local deadline=$(( t0 + START_TIMEOUT )) pid
  while :; do
    pid="$(read_pid "$KAFKA_PID")"
    pid_is_ours "$pid" kafka || fail_start kafka "process exited during startup"
    if kafka_healthy "$KAFKA_PORT"; then break; fi
    (( $(now) < deadline )) || fail_start kafka "timed out after ${START_TIMEOUT}s waiting for $KAFKA_HOST:$KAFKA_PORT"
    sleep 1
  done
  (( KAFKA_REUSED )) || info "kafka: healthy after $(( $(now) - t0 ))s"
}

# ---------------------------------------------------------------- registry
psql_q() { # psql_q <db> <sql>
  PGPASSWORD="$REGISTRY_DB_PASSWORD" PGCONNECT_TIMEOUT=5 psql -X -q -v ON_ERROR_STOP=1 -h "$REGISTRY_DB_HOST" -p "$REGISTRY_DB_PORT" -U "$REGISTRY_DB_USER" -d "$1" -tAc "$2"
}
registry_ensure_db() {
  [[ "$REGISTRY_DB" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "REGISTRY_DB='$REGISTRY_DB' is not a plain identifier"
  local err
  if ! err="$(psql_q postgres 'select 1' 2>&1)"; then
    die "postgres not reachable on $REGISTRY_DB_HOST:$REGISTRY_DB_PORT as $REGISTRY_DB_USER: ${err//$'\n'/ }
        Fix: start it with 'pg_ctlcluster 15 main start' (or 'service postgresql start'), or set REGISTRY_DB_HOST/REGISTRY_DB_PORT/REGISTRY_DB_USER/REGISTRY_DB_PASSWORD."
  fi
  if [[ "$(psql_q postgres "select 1 from pg_database where datname='$REGISTRY_DB'")" != 1 ]]; then
    info "registry: creating database $REGISTRY_DB"
    psql_q postgres "create database \"$REGISTRY_DB\"" >/dev/null 2>&1 \
      || [[ "$(psql_q postgres "select 1 from pg_database where datname='$REGISTRY_DB'")" == 1 ]] \
      || die "could not create database $REGISTRY_DB (user $REGISTRY_DB_USER needs CREATEDB)"
  fi
}

registry_healthy() { # registry_healthy <http port> <mgmt port>
  curl -fsS -m 5 -o /dev/null "$(registry_health_url "$2")" 2>/dev/null \
    && curl -fsS -m 5 -o /dev/null "$(registry_url "$1")/subjects" 2>/dev/null
}

start_registry_launch() {
  REGISTRY_REUSED=0
  local pid java
  if pid="$(comp_pid_running registry)"; then
    local rport; rport="$(state_get registry PORT)"; rport="${rport:-$REGISTRY_PORT}"
    if [[ "$rport" != "$REGISTRY_PORT" ]]; then
      die "registry is already running (pid $pid) on port $rport, but REGISTRY_PORT=$REGISTRY_PORT was requested: run '$0 stop registry' first"
    fi
    info "registry: already running (pid $pid) - reusing"
    REGISTRY_REUSED=1
    return 0
  fi
  if [[ -f "$REGISTRY_PID" ]]; then info "registry: removing stale pid file ($(read_pid "$REGISTRY_PID"))"; rm -f "$REGISTRY_PID"; fi
  java="$(find_registry_java)"
  local p; for p in "$REGISTRY_PORT" "$REGISTRY_MGMT_PORT"; do
    if port_open "$p"; then
      local owner; owner="$(port_owner "$p" || true)"
      die "port $p on 127.0.0.1 is already in use${owner:+ by $owner}: set REGISTRY_PORT / REGISTRY_MGMT_PORT (now $REGISTRY_PORT / $REGISTRY_MGMT_PORT) or stop that process"
    fi
  done
  registry_ensure_db
  mkdir -p "$REGISTRY_RUN/tmp" "$REGISTRY_RUN/snapshots"
  printf 'PORT=%s\nMGMT_PORT=%s\nDB=%s\nJAVA=%s\n' "$REGISTRY_PORT" "$REGISTRY_MGMT_PORT" "$REGISTRY_DB" "$java" >"$REGISTRY_STATE"
  # Settings (Apicurio Registry 3.x names, checked against the app's own application.properties):
  #  - storage: apicurio.storage.kind=sql + apicurio.storage.sql.kind=postgresql + apicurio.datasource.*
  #  - HTTP API on quarkus.http.port; health lives on the Quarkus *management* interface
  #    (quarkus.management.enabled=true is baked in at build time, root path "/"):
  #    http://127.0.0.1:$REGISTRY_MGMT_PORT/health/ready
  #  - auth off (OIDC tenant + basic client credentials + RBAC), OpenTelemetry SDK off
  #  - ccompat: ids are content ids (legacy-id-mode off) like Confluent; re-registering the same
  #    schema returns the existing id (verified; 3.3.x also falls back to the canonical hash).
  # shellcheck disable=SC2086
  launch registry "$REGISTRY_RUN" "$java" $REGISTRY_HEAP_OPTS $REGISTRY_JVM_OPTS \
    -Dgw.infra.component=registry -Dgw.infra.run="$RUN_DIR" \
    -Djava.io.tmpdir="$REGISTRY_RUN/tmp" \
    -Dquarkus.http.host="$REGISTRY_HOST" \
    -Dquarkus.http.port="$REGISTRY_PORT" \
    -Dquarkus.management.host="$REGISTRY_HOST" \
    -Dquarkus.management.port="$REGISTRY_MGMT_PORT" \
    -Dquarkus.http.access-log.enabled=false \
    -Dquarkus.log.console.format='%d{yyyy-MM-dd HH:mm:ss,SSS} %-5p [%c{3.}] (%t) %s%e%n' \
    -Dapicurio.storage.kind=sql \
    -Dapicurio.storage.sql.kind=postgresql \
    -Dapicurio.datasource.url="jdbc:postgresql://$REGISTRY_DB_HOST:$REGISTRY_DB_PORT/$REGISTRY_DB" \
    -Dapicurio.datasource.username="$REGISTRY_DB_USER" \
    -Dapicurio.datasource.password="$REGISTRY_DB_PASSWORD" \
    -Dapicurio.datasource.jdbc.initial-size=2 \
    -Dapicurio.datasource.jdbc.min-size=2 \
    -Dapicurio.datasource.jdbc.max-size=10 \
    -Dapicurio.sql.init=true \
    -Dapicurio.storage.snapshot.location="$REGISTRY_RUN/snapshots" \
    -Dquarkus.oidc.tenant-enabled=false \
    -Dapicurio.authn.basic-client-credentials.enabled=false \
    -Dapicurio.auth.role-based-authorization=false \
    -Dapicurio.auth.owner-only-authorization=false \
    -Dquarkus.otel.sdk.disabled=true \
    -Dapicurio.ccompat.legacy-id-mode.enabled=false \
    -Dapicurio.ccompat.use-canonical-hash="${REGISTRY_CCOMPAT_CANONICAL_HASH:-false}" \
    $REGISTRY_EXTRA_OPTS \
    -jar "$REGISTRY_HOME/quarkus-run.jar"
  info "registry: launched pid $(read_pid "$REGISTRY_PID") with $java (log $REGISTRY_LOG)"
}

start_registry_wait() {
  local t0; t0=$(now)
  local deadline=$(( t0 + START_TIMEOUT )) pid
  while :; do
    pid="$(read_pid "$REGISTRY_PID")"
    pid_is_ours "$pid" registry || fail_start registry "process exited during startup"
    if registry_healthy "$REGISTRY_PORT" "$REGISTRY_MGMT_PORT"; then break; fi
    (( $(now) < deadline )) || fail_start registry "timed out after ${START_TIMEOUT}s waiting for $(registry_health_url "$REGISTRY_MGMT_PORT")"
    sleep 1
  done
  (( REGISTRY_REUSED )) || info "registry: healthy after $(( $(now) - t0 ))s"
}

# ---------------------------------------------------------------- commands
parse_target() {
  case "${1:-all}" in
    kafka|registry|all) echo "${1:-all}";;
    *) die "unknown component '${1}': use kafka, registry or all";;
  esac
}

print_env() { # the lines tests/services consume (stdout); also kept in $RUN_DIR/infra.env
  local out=""
  if comp_pid_running kafka >/dev/null; then out+="KAFKA_BROKERS=$(kafka_url "$(state_get kafka PORT)")"$'\n'; fi
  if comp_pid_running registry >/dev/null; then out+="SCHEMA_REGISTRY_URL=$(registry_url "$(state_get registry PORT)")"$'\n'; fi
  printf '%s' "$out" >"$RUN_DIR/infra.env"
  printf '%s' "$out"
}

cmd_start() {
  local target; target="$(parse_target "${1:-all}")"
  local t0; t0=$(now)
  case "$target" in
    kafka)    check_prereqs java;;
    registry) check_prereqs curl psql; find_registry_java >/dev/null;;
    all)      check_prereqs java curl psql; find_registry_java >/dev/null;;
  esac
  lock
  ensure_fetched
  local want_k=0 want_r=0
  if [[ "$target" == kafka || "$target" == all ]]; then want_k=1; fi
  if [[ "$target" == registry || "$target" == all ]]; then want_r=1; fi
  # launch both first, then wait: the two JVMs boot in parallel
  if (( want_k )); then start_kafka_launch; fi
  if (( want_r )); then start_registry_launch; fi
  if (( want_k )); then start_kafka_wait; fi
  if (( want_r )); then start_registry_wait; fi
  info "ready in $(( $(now) - t0 ))s"
  print_env >/dev/null
  if (( want_k )); then echo "KAFKA_BROKERS=$(kafka_url "$(state_get kafka PORT)")"; fi
  if (( want_r )); then echo "SCHEMA_REGISTRY_URL=$(registry_url "$(state_get registry PORT)")"; fi
  return 0
}

cmd_stop() {
  local target; target="$(parse_target "${1:-all}")"
  lock
  # registry first (nothing depends on it), then kafka
  if [[ "$target" == registry || "$target" == all ]]; then stop_comp registry; fi
  if [[ "$target" == kafka || "$target" == all ]]; then stop_comp kafka; fi
  print_env >/dev/null || true
  return 0
}

cmd_status() {
  local rc=0 pid port mport
  if pid="$(comp_pid_running kafka)"; then
    port="$(state_get kafka PORT)"; port="${port:-$KAFKA_PORT}"
    if port_open "$port"; then echo "kafka:    running (pid $pid)  KAFKA_BROKERS=$(kafka_url "$port")  data=$(state_get kafka DATA_DIR)"
    else echo "kafka:    starting/unhealthy (pid $pid, $(kafka_url "$port") not accepting connections)"; rc=3; fi
  else
    [[ -f "$KAFKA_PID" ]] && echo "kafka:    stopped (stale pid file $KAFKA_PID)" || echo "kafka:    stopped  (would listen on $(kafka_url "$KAFKA_PORT"))"
    rc=3
  fi
  if pid="$(comp_pid_running registry)"; then
    port="$(state_get registry PORT)"; port="${port:-$REGISTRY_PORT}"
    mport="$(state_get registry MGMT_PORT)"; mport="${mport:-$REGISTRY_MGMT_PORT}"
    if registry_healthy "$port" "$mport"; then echo "registry: running (pid $pid)  SCHEMA_REGISTRY_URL=$(registry_url "$port")  health=$(registry_health_url "$mport")  db=$(state_get registry DB)"
    else echo "registry: starting/unhealthy (pid $pid, $(registry_health_url "$mport") not ready)"; rc=3; fi
  else
    [[ -f "$REGISTRY_PID" ]] && echo "registry: stopped (stale pid file $REGISTRY_PID)" || echo "registry: stopped  (would serve $(registry_url "$REGISTRY_PORT"))"
    rc=3
  fi
  echo "cache:    $CACHE_DIR ($( [[ -f "$KAFKA_HOME/$FETCH_MARKER" && -f "$REGISTRY_HOME/$FETCH_MARKER" ]] && echo fetched || echo 'not fetched: run fetch'))"
  echo "run dir:  $RUN_DIR"
  return $rc
}

cmd_logs() {
  local target=all follow=0 a
  for a in "$@"; do
    case "$a" in -f|--follow) follow=1;; *) target="$(parse_target "$a")";; esac
  done
  local files=()
  if [[ "$target" == kafka || "$target" == all ]]; then files+=("$KAFKA_LOG"); fi
  if [[ "$target" == registry || "$target" == all ]]; then files+=("$REGISTRY_LOG"); fi
  local existing=() f; for f in "${files[@]}"; do [[ -f "$f" ]] && existing+=("$f"); done
  (( ${#existing[@]} )) || die "no logs yet under $LOG_DIR"
  if (( follow )); then exec tail -n "${INFRA_LOG_LINES:-100}" -F "${existing[@]}"
  else tail -n "${INFRA_LOG_LINES:-100}" "${existing[@]}"; fi
}

cmd_reset() {
  local target; target="$(parse_target "${1:-all}")"
  cmd_stop "$target"
  if [[ "$target" == kafka || "$target" == all ]]; then
    if [[ -n "${KAFKA_DATA_DIR:-}" ]]; then
      info "kafka: KAFKA_DATA_DIR is set - not deleting it ($KAFKA_DATA_DIR); remove it yourself"
    fi
    rm -rf "$KAFKA_RUN" "$KAFKA_STATE"
    info "kafka: data, cluster id and config removed ($KAFKA_RUN)"
  fi
  if [[ "$target" == registry || "$target" == all ]]; then
    check_prereqs psql
    if psql_q postgres 'select 1' >/dev/null 2>&1; then
      local err
      if err="$(psql_q postgres "drop database if exists \"$REGISTRY_DB\"" 2>&1)"; then
        info "registry: database $REGISTRY_DB dropped (recreated on next start)"
      else
        die "could not drop database $REGISTRY_DB: ${err//$'\n'/ }
        (another registry - e.g. another checkout or GW_RUN_DIR - is probably still connected to it: stop that one first)"
      fi
    else
      warn "postgres not reachable - database $REGISTRY_DB not dropped"
    fi
    rm -rf "$REGISTRY_RUN" "$REGISTRY_STATE"
  fi
}

usage() {
  sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

main() {
  local cmd="${1:-}"; shift || true
  case "$cmd" in
    fetch)  cmd_fetch "$@";;
    start)  cmd_start "$@";;
    stop)   cmd_stop "$@";;
    status) cmd_status "$@";;
    logs)   cmd_logs "$@";;
    reset)  cmd_reset "$@";;
    -h|--help|help|"") usage;;
    *) usage >&2; die "unknown command '$cmd'";;
  esac
}

main "$@"
