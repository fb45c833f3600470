#!/usr/bin/env bash
# Builds kube-apiserver and etcd from the Go module proxy (they are not packaged
# for these machines) and caches them under ~/.cache, keyed by version.
# Prints the directory holding both binaries (usable as KUBEBUILDER_ASSETS).
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-1.37.2}"
ETCD_VERSION="${ETCD_VERSION:-3.7.3}"
CACHE_ROOT="${INGRESS_XDS_CACHE:-$HOME/.cache/ingress-xds}"
DEST="$CACHE_ROOT/kube-$KUBE_VERSION-etcd-$ETCD_VERSION"

if [[ -x "$DEST/kube-apiserver" && -x "$DEST/etcd" ]]; then
  echo "$DEST"
  exit 0
fi
mkdir -p "$DEST"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# A throwaway build cache: kube-apiserver adds ~3 GB to it that nobody reuses.
export GOCACHE="$work/gocache"
export GOFLAGS="-mod=mod -buildvcs=false"
export GOTOOLCHAIN=local

if [[ ! -x "$DEST/etcd" ]]; then
  echo "building etcd v$ETCD_VERSION ..." >&2
  mkdir -p "$work/etcd"
  (
    cd "$work/etcd"
    go mod init etcdwrapper >/dev/null 2>&1
    go mod edit -require="go.etcd.io/etcd/server/v3@v$ETCD_VERSION"
    echo 'package main; import _ "go.etcd.io/etcd/server/v3/etcdmain"; func main() {}' > tools.go
    go mod tidy >&2
    go build -trimpath -ldflags "-s -w" -o "$DEST/etcd.tmp" go.etcd.io/etcd/server/v3 >&2
  )
  mv "$DEST/etcd.tmp" "$DEST/etcd"
fi

if [[ ! -x "$DEST/kube-apiserver" ]]; then
  echo "building kube-apiserver v$KUBE_VERSION (about 5 minutes) ..." >&2
  mkdir -p "$work/kube"
  (
    cd "$work/kube"
    go mod init kubewrapper >/dev/null 2>&1
    go mod edit -require="k8s.io/kubernetes@v$KUBE_VERSION"
    gomod="$(go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')"
    # Every staging module is at v0.0.0 in kubernetes' go.mod; point each at
    # its published twin v0.X.Y.
    for m in $(grep -E '^\s*k8s\.io/\S+ v0\.0\.0$' "$gomod" | awk '{print $1}'); do
      go mod edit -replace="$m=$m@v0.${KUBE_VERSION#1.}"
    done
    echo 'package main; import _ "k8s.io/kubernetes/cmd/kube-apiserver/app"; func main() {}' > tools.go
    go mod tidy >&2
    v=k8s.io/component-base/version
    go build -trimpath -ldflags "-s -w -X $v.gitVersion=v$KUBE_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$(cut -d. -f2 <<<"$KUBE_VERSION")" \
      -o "$DEST/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver >&2
  )
  mv "$DEST/kube-apiserver.tmp" "$DEST/kube-apiserver"
fi
echo "$DEST"
