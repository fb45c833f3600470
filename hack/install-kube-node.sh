#!/usr/bin/env bash
# Builds the Kubernetes binaries a node needs (kubeadm, kubelet, kubectl,
# kube-controller-manager, kube-scheduler, kube-proxy) from the Go module
# proxy, as hack/install-kube.sh builds kube-apiserver, and caches them under
# ~/.cache, keyed by version. They are not packaged for these machines, and
# there is no registry to pull kind's node image from: hack/kind-images.sh
# makes the node image out of these. Prints the directory holding them.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-1.37.2}"
CACHE_ROOT="${INGRESS_XDS_CACHE:-$HOME/.cache/ingress-xds}"
DEST="$CACHE_ROOT/kube-node-$KUBE_VERSION"
BINS=(kubeadm kubelet kubectl kube-controller-manager kube-scheduler kube-proxy)

missing=()
for b in "${BINS[@]}"; do [[ -x "$DEST/$b" ]] || missing+=("$b"); done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "$DEST"
  exit 0
fi
mkdir -p "$DEST"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# One build cache for all six (they share most packages), thrown away after:
# it is several GB that nothing else reuses.
export GOCACHE="$work/gocache"
export GOFLAGS="-mod=mod -buildvcs=false"
export GOTOOLCHAIN=local
# Static binaries: they run inside kind's node and in FROM-scratch images.
export CGO_ENABLED=0

echo "building ${missing[*]} v$KUBE_VERSION (tens of minutes cold) ..." >&2
start=$SECONDS
mkdir -p "$work/kube" "$work/out"
cd "$work/kube"
go mod init kubewrapper >/dev/null 2>&1
go mod edit -require="k8s.io/kubernetes@v$KUBE_VERSION"
gomod="$(go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')"
# Every staging module is at v0.0.0 in kubernetes' go.mod; point each at its
# published twin v0.X.Y.
for m in $(grep -E '^\s*k8s\.io/\S+ v0\.0\.0$' "$gomod" | awk '{print $1}'); do
  go mod edit -replace="$m=$m@v0.${KUBE_VERSION#1.}"
done
pkgs=()
{
  echo 'package main'
  echo 'import ('
  for b in "${missing[@]}"; do
    case "$b" in
      kubectl) p=k8s.io/kubernetes/cmd/kubectl ;;
      *) p=k8s.io/kubernetes/cmd/$b ;;
    esac
    pkgs+=("$p")
    echo "  _ \"$p\""
  done
  echo ')'
  echo 'func main() {}'
} > tools.go
# tools.go imports main packages, which go vet would reject but go mod tidy
# accepts: it only needs the module graph.
go mod tidy >&2 || true
v=k8s.io/component-base/version
go build -trimpath -ldflags "-s -w -X $v.gitVersion=v$KUBE_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$(cut -d. -f2 <<<"$KUBE_VERSION") -X $v.gitTreeState=clean" \
  -o "$work/out/" "${pkgs[@]}" >&2
for b in "${missing[@]}"; do mv "$work/out/$b" "$DEST/$b"; done
echo "built ${missing[*]} in $((SECONDS - start)) s" >&2
echo "$DEST"
