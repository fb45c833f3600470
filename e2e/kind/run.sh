#!/usr/bin/env bash
# End-to-end tests on kind (`make e2e-kind`, docs/kind.md): makes sure a
# Docker engine runs (hack/docker.sh), builds every image the cluster needs
# with no registry (hack/kind-images.sh: kind's base and node images;
# hack/project-images.sh: ingress-xds, Envoy, echo), creates a kind cluster,
# loads the project's images into it, then runs the Go test in e2e/kind,
# which applies deploy/ with those images and runs the scenarios through the
# Envoy DaemonSet's host ports. The cluster is deleted at the end
# (KEEP_CLUSTER=1 keeps it); on failure kind's logs are exported first.
#
# With a registry, KIND_NODE_IMAGE=pinned selects the node image kind
# v0.33.0 was released with, and the project's images are built from
# deploy/Dockerfile and e2e/kind/echo.Dockerfile, Envoy pulled, as before.
#
# Environment (all optional):
#   KIND_CLUSTER     cluster name                          (ingress-xds-e2e)
#   KIND_HTTP_PORT   loopback port for Envoy's :80         (18080)
#   KIND_HTTPS_PORT  loopback port for Envoy's :443        (18443)
#   KIND_NODE_IMAGE  a node image to use instead of building one; "pinned"
#                    for kind's own (needs a registry)
#   KEEP_CLUSTER=1   leave the cluster running afterwards
#   GO_TEST_FLAGS    extra flags for go test, e.g. "-run TestKind/routing"
#   GATEWAY_CONFORMANCE=0  skip Gateway API's conformance suite, which runs
#                    on the same cluster after the kind suite (its images
#                    built by hack/conformance-images.sh, the suite in
#                    e2e/gatewayconformance, docs/gateway-api.md)
#   CONFORMANCE_REPORT  where the suite writes its report (kept in the
#                    work directory otherwise)
#   CONFORMANCE_FLAGS   extra flags for the suite, e.g. "-run-test
#                    HTTPRouteSimpleSameNamespace"
#   CONFORMANCE_CHANNEL  "experimental" (the default): the suite first
#                    replaces deploy/'s standard-channel CRDs with the
#                    experimental channel's of the same version, whose
#                    HTTPRoute carries retries; "standard" keeps deploy/'s
#                    and claims none of the experimental channel's features
set -euo pipefail
cd "$(dirname "$0")/../.."

# Pinned: kind and the node image it was released with (from kind's
# pkg/apis/config/defaults/image.go at that version).
KIND_VERSION=v0.33.0
PINNED_NODE_IMAGE="kindest/node:v1.37.0@sha256:a1ed56cfb0e7b93589bdf97c8cd566405a265939e3620fc4f5de89adff580ae5"

CLUSTER="${KIND_CLUSTER:-ingress-xds-e2e}"
HTTP_PORT="${KIND_HTTP_PORT:-18080}"
HTTPS_PORT="${KIND_HTTPS_PORT:-18443}"
TOOLS="$PWD/.tools"
KIND="$TOOLS/bin/kind"
# The nodes' docker network, made here rather than by kind: kind's own
# "kind" network would get an IPv6 ULA prefix besides the IPv4 one, and the
# cluster's addresses all come from 198.19.0.0/16 (hack/docker.sh).
KIND_NETWORK=ingress-xds-kind
KIND_SUBNET=198.19.16.0/24
export GOTOOLCHAIN=local GOFLAGS="-mod=mod -buildvcs=false"

log() { printf '\n=== %s\n' "$*" >&2; }
t0=$SECONDS
times=()
timed() { times+=("$(printf '%-28s %5d s' "$1" $((SECONDS - t0)))"); t0=$SECONDS; }
# After a failed verbose run: what each failed test said, where CI's
# excerpt of the output (its head and tail) shows it, then the failure.
failed_tests() {
  envoys_state >&2 || true
  # Printed by cleanup, after everything else: CI shows only the head and
  # the tail of a run.
  python3 hack/test-failures.py "$1" 20 >"$work/failures.txt" || true
  exit 1
}
# Whether each Envoy is connected, takes its updates and has any warming:
# a request through a Gateway's Service reaches any of them, so one Envoy
# behind the others shows as a test that passes one request in two.
envoys_state() {
  # A bound on each call: this runs after a failure, when the cluster
  # itself may be what failed.
  local k=(kubectl --kubeconfig "$work/kubeconfig" --request-timeout=30s -n ingress-xds) pod
  log "the pods, and each Envoy's xDS counters"
  "${k[@]}" get pods -o wide
  for pod in $("${k[@]}" get pods -l app.kubernetes.io/name=envoy -o name); do
    echo "--- $pod"
    "${k[@]}" exec "$pod" -c envoy -- /bin/bash -c '
      exec 3<>/dev/tcp/127.0.0.1/9901 || exit 1
      printf "GET /stats?filter=%s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n" \
        "^(control_plane\.|listener_manager\.(lds\.|total_listeners)|cluster_manager\.(cds\.|warming)|server\.(state|live))" >&3
      cat <&3' | grep -E '^[a-z_.]+: [0-9]' | grep -v '_time' || true
  done
  # Not the objects' problems, which the suites make on purpose.
  log "the control plane's own warnings and errors, last 40"
  "${k[@]}" logs -l app.kubernetes.io/name=ingress-xds --all-containers --tail=5000 --prefix 2>/dev/null |
    grep -E 'level=(WARN|ERROR)' | grep -v 'msg="problem with' | tail -40 | cut -c1-400
}

bash hack/docker.sh
timed "docker engine"

if [[ ! -x "$KIND" ]] || [[ "$("$KIND" version 2>/dev/null | awk '{print $2}')" != "$KIND_VERSION" ]]; then
  log "installing kind $KIND_VERSION into $TOOLS/bin"
  mkdir -p "$TOOLS/bin"
  GOBIN="$TOOLS/bin" go install "sigs.k8s.io/kind@$KIND_VERSION"
fi

TAG="kind-$(git rev-parse --short HEAD 2>/dev/null || echo dev)$(git diff --quiet 2>/dev/null || echo -dirty)"
case "${KIND_NODE_IMAGE:-}" in
  "")
    log "building kind's images locally (hack/kind-images.sh)"
    NODE_IMAGE="$(bash hack/kind-images.sh | tail -1)"
    timed "kind images"
    if [[ -f hack/project-images.sh ]]; then
      log "building the project's images locally (hack/project-images.sh)"
      # An assignment first: eval "$(...)" would hide the script's failure.
      assignments="$(bash hack/project-images.sh)"
      eval "$assignments"
      timed "project images"
    else
      echo "hack/project-images.sh does not exist yet: no project images to load" >&2
      INGRESS_XDS_IMAGE="" ENVOY_IMAGE="" ECHO_IMAGE=""
    fi
    ;;
  *)
    [[ "$KIND_NODE_IMAGE" == pinned ]] && KIND_NODE_IMAGE="$PINNED_NODE_IMAGE"
    NODE_IMAGE="$KIND_NODE_IMAGE"
    INGRESS_XDS_IMAGE="ingress-xds:$TAG"
    ECHO_IMAGE="ingress-xds-echo:$TAG"
    log "building $INGRESS_XDS_IMAGE and $ECHO_IMAGE (deploy/Dockerfile, needs a registry)"
    DOCKER_BUILDKIT=1 docker build -f deploy/Dockerfile --build-arg VERSION="$TAG" -t "$INGRESS_XDS_IMAGE" .
    DOCKER_BUILDKIT=1 docker build -f e2e/kind/echo.Dockerfile -t "$ECHO_IMAGE" .
    # Envoy too: pulled once here rather than by every node.
    ENVOY_IMAGE="$(awk '/image: envoyproxy\/envoy:/ {print $2; exit}' deploy/envoy.yaml)"
    docker pull "$ENVOY_IMAGE"
    timed "project images"
    ;;
esac

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
    # The route to its Service network, if the conformance run made it.
    ip route del 198.19.96.0/20 2>/dev/null || true
  elif [[ -n "$created" ]]; then
    log "cluster $CLUSTER kept: export KUBECONFIG=$work/kubeconfig"
  fi
  if [[ $status -eq 0 && "${KEEP_CLUSTER:-}" != 1 ]]; then
    rm -rf "$work"
  fi
  if [[ ${#times[@]} -gt 0 ]]; then
    printf '\ne2e-kind steps:\n' >&2
    printf '  %s\n' "${times[@]}" >&2
  fi
  if [[ -s "$work/failures.txt" ]]; then
    cat "$work/failures.txt" >&2
  fi
  exit $status
}
trap cleanup EXIT

if "$KIND" get clusters 2>/dev/null | grep -qx "$CLUSTER"; then
  echo "a kind cluster named $CLUSTER exists already: delete it or set KIND_CLUSTER" >&2
  exit 1
fi
if ! docker network inspect "$KIND_NETWORK" >/dev/null 2>&1; then
  docker network create --driver bridge --subnet "$KIND_SUBNET" \
    -o com.docker.network.bridge.enable_ip_masquerade=true \
    -o com.docker.network.driver.mtu=1500 "$KIND_NETWORK" >/dev/null
fi
export KIND_EXPERIMENTAL_DOCKER_NETWORK="$KIND_NETWORK"

log "creating kind cluster $CLUSTER ($NODE_IMAGE), Envoy on 127.0.0.1:$HTTP_PORT and :$HTTPS_PORT"
sed -e "s/@HTTP_PORT@/$HTTP_PORT/" -e "s/@HTTPS_PORT@/$HTTPS_PORT/" e2e/kind/cluster.yaml > "$work/cluster.yaml"
created=1
"$KIND" create cluster --name "$CLUSTER" --image "$NODE_IMAGE" \
  --config "$work/cluster.yaml" --kubeconfig "$work/kubeconfig" --wait 180s
timed "kind create cluster"

images=()
for i in "$INGRESS_XDS_IMAGE" "$ENVOY_IMAGE" "$ECHO_IMAGE"; do [[ -n "$i" ]] && images+=("$i"); done
if [[ ${#images[@]} -eq 0 ]]; then
  echo "no project images to load: stopping before the tests" >&2
  exit 1
fi
log "loading ${images[*]} into the cluster"
"$KIND" load docker-image --name "$CLUSTER" "${images[@]}"
timed "kind load docker-image"

log "running the end-to-end tests"
# shellcheck disable=SC2086 # GO_TEST_FLAGS is a list of flags
if ! INGRESS_XDS_KIND_KUBECONFIG="$work/kubeconfig" \
INGRESS_XDS_KIND_IMAGE="$INGRESS_XDS_IMAGE" \
INGRESS_XDS_KIND_ENVOY_IMAGE="$ENVOY_IMAGE" \
INGRESS_XDS_KIND_ECHO_IMAGE="$ECHO_IMAGE" \
INGRESS_XDS_KIND_HTTP="127.0.0.1:$HTTP_PORT" \
INGRESS_XDS_KIND_HTTPS="127.0.0.1:$HTTPS_PORT" \
  go test -count=1 -v -timeout 30m ${GO_TEST_FLAGS:-} ./e2e/kind/ 2>&1 | tee "$work/kind-test.log"; then
  failed_tests "$work/kind-test.log"
fi
timed "go test ./e2e/kind"

if [[ "${GATEWAY_CONFORMANCE:-1}" == 1 ]]; then
  log "building the images of Gateway API's conformance suite (hack/conformance-images.sh)"
  conformance_images="$(bash hack/conformance-images.sh)"
  mapfile -t conformance_images <<<"$conformance_images"
  "$KIND" load docker-image --name "$CLUSTER" "${conformance_images[@]}"
  timed "conformance images"
  options=options.yaml
  if [[ "${CONFORMANCE_OWN_ADDRESSES:-1}" == 1 ]]; then
    # Each Gateway on Envoy ports of its own behind a ClusterIP Service of
    # its own (deploy/gateway-own-addresses/, with ClusterIP: kind has no
    # load balancer), which the suite reaches through a route to the
    # Service network via the first worker.
    log "serving each Gateway on addresses of its own (--gateway-own-addresses)"
    k=(kubectl --kubeconfig "$work/kubeconfig" -n ingress-xds)
    "${k[@]}" apply -f deploy/gateway-own-addresses/rbac.yaml
    "${k[@]}" patch deployment ingress-xds --type=json -p '[{"op":"add","path":"/spec/template/spec/containers/0/args/-","value":"--gateway-own-addresses"},{"op":"add","path":"/spec/template/spec/containers/0/args/-","value":"--gateway-service-type=ClusterIP"}]'
    "${k[@]}" rollout status deployment ingress-xds --timeout=180s
    worker="$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$CLUSTER-worker")"
    ip route replace 198.19.96.0/20 via "$worker"
    # A connection to a Service the worker's kube-proxy does not forward
    # yet is reset, not looped back: conntrack would otherwise keep the
    # first packet's fate for every retry of that connection.
    docker exec "$CLUSTER-worker" iptables -I FORWARD -d 198.19.96.0/20 -p tcp -j REJECT --reject-with tcp-reset
    options=options-own.yaml
  fi
  log "running Gateway API's conformance suite (e2e/gatewayconformance)"
  report="${CONFORMANCE_REPORT:-$work/conformance-report.yaml}"
  [[ "$report" == /* ]] || report="$PWD/$report"
  experimental_crds=""
  case "${CONFORMANCE_CHANNEL:-experimental}" in
    experimental) experimental_crds="$(cd e2e/gatewayconformance && go mod download sigs.k8s.io/gateway-api && go list -m -f '{{.Dir}}' sigs.k8s.io/gateway-api)/config/crd/experimental" ;;
    standard) ;;
    *) echo "CONFORMANCE_CHANNEL=$CONFORMANCE_CHANNEL: want experimental or standard" >&2; exit 1 ;;
  esac
  # shellcheck disable=SC2086 # CONFORMANCE_FLAGS is a list of flags
  if ! (cd e2e/gatewayconformance && KUBECONFIG="$work/kubeconfig" \
    GATEWAY_API_EXPERIMENTAL_CRDS="$experimental_crds" \
    go test -count=1 -v -timeout 45m . -args \
      -conformance-options-file="$options" -report-output="$report" \
      -version="$(git describe --always --dirty 2>/dev/null || echo dev)" ${CONFORMANCE_FLAGS:-}) 2>&1 | tee "$work/conformance.log"; then
    failed_tests "$work/conformance.log"
  fi
  timed "gateway api conformance"
fi
