#!/usr/bin/env bash
# The demo: the control plane in file mode on examples/, a real Envoy
# bootstrapped from it, and two echo backends. With --check it sends the
# README's requests, checks the answers and exits (the test suite runs it that
# way); otherwise it keeps running until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
check=false
[[ "${1:-}" == "--check" ]] && check=true

state="$PWD/.demo"
rm -rf "$state" && mkdir -p "$state"
envoy="$PWD/.tools/bin/envoy"
[[ -x "$envoy" ]] || { echo "no Envoy at $envoy: run make tools" >&2; exit 1; }

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

bin/echo -listen 127.0.0.1:9001=coffee,127.0.0.1:9002=tea >"$state/echo.log" 2>&1 &
pids+=($!)
bin/ingress-xds serve --insecure --manifests examples --xds-address 127.0.0.1:18000 \
  --metrics-address 127.0.0.1:8000 --http-port 8080 >"$state/ingress-xds.log" 2>&1 &
pids+=($!)
bin/ingress-xds bootstrap --xds-address 127.0.0.1:18000 --node-id demo \
  --admin-address 127.0.0.1:9901 --out "$state/envoy.json"
"$envoy" -c "$state/envoy.json" --base-id 4242 --log-level warn >"$state/envoy.log" 2>&1 &
pids+=($!)

# Wait until Envoy has its routes from the control plane.
for _ in $(seq 1 100); do
  if curl -fsS -o /dev/null -H 'Host: cafe.example.com' http://127.0.0.1:8080/coffee 2>/dev/null; then
    break
  fi
  sleep 0.2
done

fail=0
expect() { # expect WANT CMD...
  local want="$1"; shift
  echo "\$ $*"
  local out; out="$("$@" 2>&1)" || true
  echo "$out"
  if [[ "$out" != *"$want"* ]]; then
    echo "!! expected the answer to contain: $want" >&2
    fail=1
  fi
}
expect '"backend":"coffee"' curl -sS -H 'Host: cafe.example.com' http://127.0.0.1:8080/coffee
expect '"backend":"tea"' curl -sS -H 'Host: cafe.example.com' http://127.0.0.1:8080/tea/green
expect '"backend":"tea"' curl -sS -H 'Host: tea.example.com' http://127.0.0.1:8080/
expect '404' curl -sS -o /dev/null -w '%{http_code}\n' -H 'Host: nobody.example.com' http://127.0.0.1:8080/
# examples/rewrite.yaml: nginx.ingress.kubernetes.io/rewrite-target at work,
# /menu/espresso reaching the coffee backend as /espresso.
expect '"backend":"coffee","host":"rewrite.example.com","path":"/espresso"' curl -sS -H 'Host: rewrite.example.com' http://127.0.0.1:8080/menu/espresso

if [[ $fail != 0 ]]; then
  echo "demo FAILED; logs in $state/" >&2
  tail -n 20 "$state"/*.log >&2
  exit 1
fi
if $check; then
  echo "demo OK"
  exit 0
fi
cat <<MSG

The demo is running: Envoy on 127.0.0.1:8080, admin on 127.0.0.1:9901,
xDS on 127.0.0.1:18000. Edit examples/cafe.yaml and the routes change live.
Logs are in .demo/. Press Ctrl-C to stop.

Where to look next:
  - What Envoy is given for these manifests, and the problems found:
      bin/ingress-xds translate -f examples
  - The live snapshot and what each Envoy runs, over gRPC: the README's
    section "Inspecting with grpcurl" (make tools installs grpcurl), e.g.
      .tools/bin/grpcurl -plaintext localhost:18000 list
  - Which of ingress-nginx's annotations are honoured, and how:
    docs/annotations.md (examples/rewrite.yaml shows rewrite-target).
  - What ingress-xds would make of your Ingresses before you switch from
    ingress-nginx (verdicts, refusals, ingress-nginx's surprising behaviours):
      bin/ingress-xds audit -f examples
    or, on a cluster: bin/ingress-xds audit --controller-class k8s.io/ingress-nginx --ingress-class nginx
    and the whole move: docs/migrating-from-ingress-nginx.md
  - In a cluster: docs/install.md (kustomize: deploy/, Helm: deploy/helm/ingress-xds).
MSG
wait
