#!/usr/bin/env bash
# make cluster / make cluster-stop: the gateway on a three-node Kafka cluster on this machine,
# with two processes of the API and of every consumer stage. The single-broker `make run` stays the
# default and can run beside it: the cluster has its own ports, database and run folder.
#
#   cluster.sh start    Kafka nodes, the registry, migrations, 2 x every service, a demo account
#   cluster.sh stop     the services, then the Kafka nodes (the registry is shared with make run: left up)
#   cluster.sh status
set -Eeuo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
REPO_ROOT="$PWD"

# What every process of the cluster stack shares (libs/config reads these).
export GW_RUN_DIR="$REPO_ROOT/.run/cluster"
export SERVICE_REPLICAS="${SERVICE_REPLICAS:-2}"
export TOPIC_REPLICATION_FACTOR=3 TOPIC_MIN_INSYNC_REPLICAS=2
export DATABASE_URL="${CLUSTER_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/chat_gateway_cluster}"
export API_PORT=28000 POLICY_PORT=28010 DELIVERY_PORT=28020 INSTANCE_EVENTS_PORT=28030 WEBHOOKS_PORT=28040 SIM_PORT=28090
export GATEWAY_ENV=local GATEWAY_SECRET_KEY_FILE="$REPO_ROOT/.run/secret.key" WEBHOOK_ALLOW_CIDRS="${WEBHOOK_ALLOW_CIDRS-127.0.0.0/8}" WEBHOOK_ALLOW_HTTP="${WEBHOOK_ALLOW_HTTP-true}"
TARGETS_FILE="$REPO_ROOT/.run/observe/targets/cluster.json"

# The Prometheus targets of every process (deploy/observe reads .run/observe/targets/*.json).
write_targets() {
  mkdir -p "$(dirname "$TARGETS_FILE")"
  node -e '
    const [file, replicas, ...services] = process.argv.slice(1);
    const groups = services.map((s) => { const [name, port] = s.split(":"); return { name, port: Number(port) }; })
      .flatMap(({ name, port }) => Array.from({ length: Number(replicas) }, (_, i) => ({ targets: [`127.0.0.1:${port + i}`], labels: { job: "gateway", stack: "cluster", instance_slot: String(i), process: `${name}-${i}` } })));
    require("fs").writeFileSync(file, JSON.stringify(groups, null, 2) + "\n");
  ' "$TARGETS_FILE" "$SERVICE_REPLICAS" api:$API_PORT policy:$POLICY_PORT delivery:$DELIVERY_PORT instance-events:$INSTANCE_EVENTS_PORT webhooks:$WEBHOOKS_PORT
}

case "${1:-}" in
  start)
    brokers="$(bash deploy/cluster/kafka-cluster.sh start | sed -n 's/^KAFKA_BROKERS=//p')"
    export KAFKA_BROKERS="$brokers"
    # The registry keeps schemas in Postgres, not Kafka: the one of make run serves the cluster too.
    GW_RUN_DIR="$REPO_ROOT/.run" bash deploy/local/infra.sh start registry >/dev/null
    npx --no-install gatewayctl migrate >/dev/null
    bash deploy/local/services.sh start
    write_targets
    {
      echo "KAFKA_BROKERS=$KAFKA_BROKERS"
      for v in GATEWAY_ENV GATEWAY_SECRET_KEY_FILE DATABASE_URL TOPIC_REPLICATION_FACTOR TOPIC_MIN_INSYNC_REPLICAS WEBHOOK_ALLOW_CIDRS WEBHOOK_ALLOW_HTTP API_PORT SIM_PORT; do echo "$v=${!v}"; done
    } >"$GW_RUN_DIR/cluster.env"
    STOP_COMMAND="make cluster-stop" bash scripts/print-demo.sh
    cat <<MSG

The cluster: Kafka nodes $KAFKA_BROKERS (replication factor 3, min.insync.replicas 2),
two processes per stage and two API processes (the second API at http://127.0.0.1:$((API_PORT + 1))).
gatewayctl against it:  set -a; . .run/cluster/cluster.env; set +a; npx gatewayctl ...
Stop it with:           make cluster-stop
MSG
    ;;
  stop)
    bash deploy/local/services.sh stop
    bash deploy/cluster/kafka-cluster.sh stop
    rm -f "$TARGETS_FILE"
    ;;
  status)
    bash deploy/cluster/kafka-cluster.sh status || true
    bash deploy/local/services.sh status
    ;;
  *) sed -n '2,9p' "$0" >&2; exit 2 ;;
esac
