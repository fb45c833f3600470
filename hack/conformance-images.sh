#!/usr/bin/env bash
# Builds, with no registry and nothing pulled, the images Gateway API's
# conformance suite (e2e/gatewayconformance, docs/gateway-api.md) runs in
# the cluster, under the exact names its manifests ask for, so that a kind
# cluster that loads them (`kind load docker-image`) never pulls:
#   registry.k8s.io/gateway-api/echo-basic:<each tag the manifests name>
#       the suite's backend, built from the conformance module's own
#       echo-basic sources, at the version e2e/gatewayconformance/go.mod
#       requires (the tags differ in the manifests, the program does not:
#       the suite of that version is written against its own echo-basic);
#   registry.k8s.io/coredns/coredns:<the version the manifests name>
#       CoreDNS from the Go module proxy: the base manifests run one for the
#       UDP tests, and the suite waits for every pod of its namespaces.
# Each image is FROM scratch with the static binary, as upstream's
# Dockerfile.echo-basic makes it on distroless (user 65532, the same
# entrypoint). Prints the image names, one a line, on stdout; what it did
# on stderr. Binaries are cached in ~/.cache/ingress-xds/conformance
# (INGRESS_XDS_CACHE); an image whose label matches its binary's hash is
# kept.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 DOCKER_BUILDKIT=0

log() { printf '%s\n' "$*" >&2; }
MODULE=e2e/gatewayconformance
CONFORMANCE_VERSION="$(cd "$MODULE" && go list -m -f '{{.Version}}' sigs.k8s.io/gateway-api/conformance)"
# go list names no directory for a module not yet in the module cache (a
# fresh machine's): download it first.
(cd "$MODULE" && go mod download sigs.k8s.io/gateway-api/conformance)
SRC="$(cd "$MODULE" && go list -m -f '{{.Dir}}' sigs.k8s.io/gateway-api/conformance)"
if [[ ! -d "$SRC/base" ]]; then
  log "conformance-images: no manifests of sigs.k8s.io/gateway-api/conformance $CONFORMANCE_VERSION in '$SRC'"
  exit 1
fi
CACHE="${INGRESS_XDS_CACHE:-$HOME/.cache/ingress-xds}/conformance"
mkdir -p "$CACHE"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The names the suite's manifests give, so none is missed when it moves on.
mapfile -t echo_names < <(grep -rhoE 'registry\.k8s\.io/gateway-api/echo-basic:[^[:space:]"]+' "$SRC/base" "$SRC/tests" | sort -u)
coredns_name="$(grep -rhoE 'registry\.k8s\.io/coredns/coredns:[^[:space:]"]+' "$SRC/base" | sort -u | head -1)"
[[ ${#echo_names[@]} -gt 0 && -n "$coredns_name" ]] || { log "no echo-basic or coredns image named in $SRC"; exit 1; }
COREDNS_VERSION="${coredns_name##*:}"

echo_bin="$CACHE/echo-basic-$CONFORMANCE_VERSION"
if [[ ! -x "$echo_bin" ]]; then
  log "building echo-basic $CONFORMANCE_VERSION"
  (cd "$MODULE" && go build -trimpath -ldflags "-buildid= -s -w" -o "$echo_bin" sigs.k8s.io/gateway-api/conformance/echo-basic)
fi
coredns_bin="$CACHE/coredns-$COREDNS_VERSION"
if [[ ! -x "$coredns_bin" ]]; then
  log "building CoreDNS $COREDNS_VERSION (go install from the module proxy)"
  GOBIN="$work/bin" go install -trimpath -ldflags "-s -w" "github.com/coredns/coredns@$COREDNS_VERSION"
  mv "$work/bin/coredns" "$coredns_bin"
fi

# image BINARY USER NAME... builds one image of BINARY as /<its base name>
# and tags it with every NAME, unless the first NAME carries BINARY's hash.
image() {
  local bin="$1" user="$2"
  shift 2
  local sum entry
  sum="$(sha256sum < "$bin" | cut -c1-16)"
  entry="/$(basename "$bin" | sed 's/-v[0-9].*//')"
  if [[ "$(docker image inspect -f '{{index .Config.Labels "ingress-xds.binary"}}' "$1" 2>/dev/null)" != "$sum" ]]; then
    local ctx="$work/ctx-$sum"
    mkdir -p "$ctx"
    cp -L "$bin" "$ctx/$(basename "$entry")"
    cat > "$ctx/Dockerfile" <<EOF
FROM scratch
COPY $(basename "$entry") $entry
LABEL ingress-xds.binary=$sum
USER $user
ENTRYPOINT ["$entry"]
EOF
    docker build -t "$1" "$ctx" >"$ctx.log" 2>&1 || { cat "$ctx.log" >&2; return 1; }
    log "$1: built"
  fi
  local name
  for name in "$@"; do
    docker tag "$1" "$name"
    echo "$name"
  done
}

image "$echo_bin" 65532:65532 "${echo_names[@]}"
# CoreDNS runs as root in the suite's manifests (NET_BIND_SERVICE for :53).
image "$coredns_bin" 0:0 "$coredns_name"
