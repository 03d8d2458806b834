#!/usr/bin/env bash
# make k8s-tools: what test/deploy needs to render and check deploy/k8s on a machine with no
# cluster and no container engine. Idempotent; downloads are kept in .cache/k8s.
#
#   kubectl        $KUBECTL if set, else the kubectl on PATH, else Debian's kubernetes-client
#                  package unpacked into .cache/k8s (apt-get download + dpkg -x: nothing is
#                  installed system-wide). Its kubectl 1.20 carries kustomize v2.0.3, which renders
#                  deploy/k8s the same as kustomize v5 (the manifests keep to what both know).
#   Strimzi CRDs   the test jar of io.strimzi:api from Maven Central, which carries the CRDs
#                  (crds/v1beta2/*.yaml) from Strimzi 0.49 on, unpacked into .cache/k8s.
#
# Prints KUBECTL=<path> and STRIMZI_CRDS=<folder> (test/deploy/k8s-tools.ts reads them).
set -Eeuo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
CACHE="${GW_CACHE_DIR:-$PWD/.cache}/k8s"
# The CRDs' v1beta2 API is the one the Strimzi 0.47 operator serves (README.md "Validation").
STRIMZI_API_VERSION=0.49.1
DEPENDENCY_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.6.1

say() { echo "k8s-tools: $*" >&2; }
die() { say "$*"; exit 1; }

find_kubectl() {
  if [[ -n "${KUBECTL:-}" ]]; then
    [[ -x "$KUBECTL" ]] || die "KUBECTL=$KUBECTL is not an executable file"
    echo "$KUBECTL"; return
  fi
  if command -v kubectl >/dev/null 2>&1; then command -v kubectl; return; fi
  local unpacked="$CACHE/kubernetes-client/usr/bin/kubectl"
  if [[ -x "$unpacked" ]]; then echo "$unpacked"; return; fi
  command -v apt-get >/dev/null 2>&1 || die "kubectl is missing and there is no apt-get to fetch Debian's kubernetes-client: install kubectl, or set KUBECTL=/path/to/kubectl"
  say "kubectl is missing: fetching Debian's kubernetes-client into $CACHE"
  local dl="$CACHE/download"
  rm -rf "$dl" "$CACHE/kubernetes-client"; mkdir -p "$dl"
  if ! (cd "$dl" && apt-get download -qq kubernetes-client 2>/dev/null); then
    # apt-get download needs the package lists, which a fresh machine may not have yet.
    if [[ "$(id -u)" -ne 0 ]]; then
      die "apt-get could not download kubernetes-client (no package lists?): run  sudo apt-get update  and try again, or install kubectl"
    fi
    apt-get update -qq
    (cd "$dl" && apt-get download -qq kubernetes-client) || die "apt-get could not download kubernetes-client: install kubectl, or set KUBECTL=/path/to/kubectl"
  fi
  dpkg -x "$dl"/kubernetes-client_*.deb "$CACHE/kubernetes-client"
  rm -rf "$dl"
  [[ -x "$unpacked" ]] || die "the kubernetes-client package held no usr/bin/kubectl"
  echo "$unpacked"
}

unpack_zip() { # unpack_zip <zip> <folder>
  if command -v unzip >/dev/null 2>&1; then unzip -q -o "$1" -d "$2"
  elif command -v python3 >/dev/null 2>&1; then python3 -m zipfile -e "$1" "$2"
  else die "neither unzip nor python3 is here to unpack $1: apt-get install unzip"; fi
}

find_strimzi_crds() {
  local dir="$CACHE/strimzi-api-$STRIMZI_API_VERSION"
  if [[ -f "$dir/crds/v1beta2/040-Crd-kafka.yaml" ]]; then echo "$dir/crds/v1beta2"; return; fi
  command -v mvn >/dev/null 2>&1 || die "Maven (mvn) is needed to fetch Strimzi's CRDs from Maven Central: apt-get install maven"
  say "fetching Strimzi's CRDs (io.strimzi:api:$STRIMZI_API_VERSION:jar:tests) from Maven Central"
  local dl="$CACHE/download" tmp="$dir.partial"
  rm -rf "$dl" "$tmp"; mkdir -p "$dl" "$tmp"
  # (Maven 3.8 prints bare colour resets even in batch mode: stripped.)
  mvn -q -B -Dstyle.color=never "$DEPENDENCY_PLUGIN:copy" -Dartifact="io.strimzi:api:$STRIMZI_API_VERSION:jar:tests" -DoutputDirectory="$dl" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2 \
    || die "Maven could not fetch io.strimzi:api:$STRIMZI_API_VERSION:jar:tests (is Maven Central reachable? see above)"
  unpack_zip "$dl/api-$STRIMZI_API_VERSION-tests.jar" "$tmp"
  [[ -f "$tmp/crds/v1beta2/040-Crd-kafka.yaml" ]] || die "io.strimzi:api:$STRIMZI_API_VERSION:jar:tests holds no crds/v1beta2/040-Crd-kafka.yaml"
  # Only the CRDs are kept.
  find "$tmp" -mindepth 1 -maxdepth 1 ! -name crds -exec rm -rf {} +
  rm -rf "$dir" "$dl"; mv "$tmp" "$dir"
  echo "$dir/crds/v1beta2"
}

mkdir -p "$CACHE"
# Test files started together (vitest runs files in parallel) fetch once, one after the other.
exec 9>"$CACHE/.lock"
flock 9

echo "KUBECTL=$(find_kubectl)"
echo "STRIMZI_CRDS=$(find_strimzi_crds)"
