#!/usr/bin/env bash
# on-cluster.sh <command...>: runs a command against the three-node Kafka cluster (deploy/cluster)
# and the schema registry, as make cluster-chaos and make cluster-bench do: starts them when they
# are not running, exports KAFKA_BROKERS and the cluster's replication settings, and stops again
# what it started. Nothing else should use the cluster meanwhile (the fault suite kills nodes).
set -Eeuo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
started_cluster=0
started_registry=0
cleanup() {
  if (( started_cluster )); then bash deploy/cluster/kafka-cluster.sh stop || true; fi
  if (( started_registry )); then bash deploy/local/infra.sh stop registry || true; fi
}
trap cleanup EXIT
if ! bash deploy/cluster/kafka-cluster.sh status >/dev/null 2>&1; then
  echo "== starting the three Kafka nodes (stopped again at the end)"
  started_cluster=1
  bash deploy/cluster/kafka-cluster.sh start >/dev/null
fi
if ! curl -fs -o /dev/null --max-time 3 "http://127.0.0.1:${REGISTRY_PORT:-18081}/apis/ccompat/v7/subjects"; then
  echo "== starting the schema registry (stopped again at the end)"
  started_registry=1
  bash deploy/local/infra.sh start registry >/dev/null
fi
KAFKA_BROKERS="$(bash deploy/cluster/kafka-cluster.sh brokers)"
export KAFKA_BROKERS TOPIC_REPLICATION_FACTOR=3 TOPIC_MIN_INSYNC_REPLICAS=2
"$@"
