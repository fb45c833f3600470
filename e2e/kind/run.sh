#!/usr/bin/env bash
# End-to-end tests on kind (`make e2e-kind`): creates a kind cluster, builds
# the ingress-xds and echo images and loads them into it, then runs the Go
# test in e2e/kind, which installs deploy/ with those images, deploys echo
# backends and checks routing, TLS, Ingress status and leader failover
# through the Envoy DaemonSet's host ports. The cluster is deleted at the end
# (KEEP_CLUSTER=1 keeps it). Needs a Docker engine, Go, and network access
# for the base images; kind itself is installed with `go install`.
#
# Environment (all optional):
#   KIND_CLUSTER     cluster name                     (ingress-xds-e2e)
#   KIND_HTTP_PORT   loopback port for Envoy's :80    (18080)
#   KIND_HTTPS_PORT  loopback port for Envoy's :443   (18443)
#   KEEP_CLUSTER=1   leave the cluster running afterwards
#   GO_TEST_FLAGS    extra flags for go test, e.g. "-run TestKind/routing"
set -euo pipefail
cd "$(dirname "$0")/../.."

# Pinned: kind and the node image it was released with (from kind's
# pkg/apis/config/defaults/image.go at that version).
KIND_VERSION=v0.33.0
KIND_NODE_IMAGE="kindest/node:v1.37.0@sha256:a1ed56cfb0e7b93589bdf97c8cd566405a265939e3620fc4f5de89adff580ae5"

CLUSTER="${KIND_CLUSTER:-ingress-xds-e2e}"
HTTP_PORT="${KIND_HTTP_PORT:-18080}"
HTTPS_PORT="${KIND_HTTPS_PORT:-18443}"
TOOLS="$PWD/.tools"
KIND="$TOOLS/bin/kind"
export GOTOOLCHAIN=local GOFLAGS="-mod=mod -buildvcs=false"

log() { printf '\n=== %s\n' "$*" >&2; }

if ! command -v docker >/dev/null || ! docker info >/dev/null 2>&1; then
  echo "e2e-kind needs a running Docker engine (docker info failed)." >&2
  echo "Without one, run the same scenarios locally against a real API server and Envoy: make test" >&2
  exit 1
fi

if [[ ! -x "$KIND" ]] || [[ "$("$KIND" version 2>/dev/null | awk '{print $2}')" != "$KIND_VERSION" ]]; then
  log "installing kind $KIND_VERSION into $TOOLS/bin"
  mkdir -p "$TOOLS/bin"
  GOBIN="$TOOLS/bin" go install "sigs.k8s.io/kind@$KIND_VERSION"
fi

TAG="kind-$(git rev-parse --short HEAD 2>/dev/null || echo dev)$(git diff --quiet 2>/dev/null || echo -dirty)"
IMAGE="ingress-xds:$TAG"
ECHO_IMAGE="ingress-xds-echo:$TAG"

work="$(mktemp -d)"
created=""
cleanup() {
  status=$?
  if [[ -n "$created" && $status -ne 0 ]]; then
    log "failed: kind's logs (node journals, pod logs) are in $work/logs"
    "$KIND" export logs --name "$CLUSTER" "$work/logs" >/dev/null 2>&1 || true
  fi
  if [[ -n "$created" && "${KEEP_CLUSTER:-}" != 1 ]]; then
    log "deleting cluster $CLUSTER"
    "$KIND" delete cluster --name "$CLUSTER" >/dev/null 2>&1 || true
  elif [[ -n "$created" ]]; then
    log "cluster $CLUSTER kept: export KUBECONFIG=$work/kubeconfig"
  fi
  if [[ $status -eq 0 && "${KEEP_CLUSTER:-}" != 1 ]]; then
    rm -rf "$work"
  fi
  exit $status
}
trap cleanup EXIT

if "$KIND" get clusters 2>/dev/null | grep -qx "$CLUSTER"; then
  echo "a kind cluster named $CLUSTER exists already: delete it or set KIND_CLUSTER" >&2
  exit 1
fi

log "creating kind cluster $CLUSTER ($KIND_NODE_IMAGE), Envoy on 127.0.0.1:$HTTP_PORT and :$HTTPS_PORT"
sed -e "s/@HTTP_PORT@/$HTTP_PORT/" -e "s/@HTTPS_PORT@/$HTTPS_PORT/" e2e/kind/cluster.yaml > "$work/cluster.yaml"
created=1
"$KIND" create cluster --name "$CLUSTER" --image "$KIND_NODE_IMAGE" \
  --config "$work/cluster.yaml" --kubeconfig "$work/kubeconfig" --wait 180s

log "building $IMAGE and $ECHO_IMAGE"
DOCKER_BUILDKIT=1 docker build -f deploy/Dockerfile --build-arg VERSION="$TAG" -t "$IMAGE" .
DOCKER_BUILDKIT=1 docker build -f e2e/kind/echo.Dockerfile -t "$ECHO_IMAGE" .

log "loading the images into the cluster"
# Envoy too: pulled once here rather than by every node.
ENVOY_IMAGE="$(awk '/image: envoyproxy\/envoy:/ {print $2; exit}' deploy/envoy.yaml)"
docker pull "$ENVOY_IMAGE"
"$KIND" load docker-image --name "$CLUSTER" "$IMAGE" "$ECHO_IMAGE" "$ENVOY_IMAGE"

log "running the end-to-end tests"
# shellcheck disable=SC2086 # GO_TEST_FLAGS is a list of flags
INGRESS_XDS_KIND_KUBECONFIG="$work/kubeconfig" \
INGRESS_XDS_KIND_IMAGE="$IMAGE" \
INGRESS_XDS_KIND_ECHO_IMAGE="$ECHO_IMAGE" \
INGRESS_XDS_KIND_HTTP="127.0.0.1:$HTTP_PORT" \
INGRESS_XDS_KIND_HTTPS="127.0.0.1:$HTTPS_PORT" \
  go test -count=1 -v -timeout 30m ${GO_TEST_FLAGS:-} ./e2e/kind/
