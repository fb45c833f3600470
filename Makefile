# ingress-xds: `make demo` to see it work, `make test` to run every test.
SHELL := /bin/bash
GO ?= go
export GOTOOLCHAIN := local
export GOFLAGS := -mod=mod -buildvcs=false
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
TOOLS := $(CURDIR)/.tools
export INGRESS_XDS_TOOLS := $(TOOLS)

.PHONY: all build tools test unit golden demo bench bench-report soak e2e-kind e2e-gateway-conformance clean

all: build

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o bin/ingress-xds ./cmd/ingress-xds
	$(GO) build -o bin/echo ./e2e/cmd/echo

## tools: Envoy, grpcurl, helm, kube-apiserver and etcd (cached in ~/.cache)
tools:
	bash hack/install-tools.sh

## test: the commit messages since hack/commits-base (CONTRIBUTING.md),
## every test (unit, golden, real API server, real Envoy), the demo,
## then the kind suite on a real cluster built from local images (e2e-kind)
test: tools build
	bash hack/check-commits.sh
	KUBEBUILDER_ASSETS=$(TOOLS)/kube $(GO) test -count=1 -timeout 30m ./...
	bash hack/demo.sh --check
	bash e2e/kind/run.sh

## unit: the tests that need no external binary
unit:
	$(GO) test -count=1 -short ./...

## golden: regenerate the golden files (YAML to IR first: the renderer's
## cases read those) and docs/annotations.md
golden:
	$(GO) test -short ./translate/ingress/... -run 'TestGolden|TestAnnotationsDoc|TestConfigMapDoc' -update
	$(GO) test -short ./translate ./translate/envoy ./translate/audit ./translate/gatewayapi -run 'TestGolden' -update

## demo: control plane on examples/, a real Envoy on :8080, two echo backends.
## It installs Envoy only: no kube-apiserver, etcd, grpcurl or helm.
demo: build
	bash hack/install-tools.sh envoy
	bash hack/demo.sh

## bench: translation and xDS benchmarks, then the load command at each of
## BENCH_N Ingresses against bin/ingress-xds (results in bin/bench/, see
## docs/benchmarks.md). BENCH_FLAGS adds flags, e.g. BENCH_FLAGS='-delta'
## (whose results are load-N-delta.json). BENCH_RUNS runs each that many
## times (load-N-delta-R.json): bench-report gives each figure's median.
BENCH_N ?= 100 1000
BENCH_RUNS ?= 1
BENCH_FLAGS ?= -changes 20 -fanout 500 -fanout-reconnect
BENCH_PROTOCOL = $(if $(findstring -delta=false,$(BENCH_FLAGS)),-sotw,-delta)
BENCH_CMD = $(CURDIR)/bin/ingress-xds serve --insecure --kubeconfig {kubeconfig} --xds-address {xds} --metrics-address 127.0.0.1:0 --status-address 192.0.2.1
bench: tools build
	$(GO) test -run '^$$' -bench . -benchmem ./translate ./xds
	$(GO) build -o bin/ingress-load ./e2e/cmd/ingress-load
	mkdir -p bin/bench
	for n in $(BENCH_N); do for r in $$(seq $(BENCH_RUNS)); do \
	  KUBEBUILDER_ASSETS=$(TOOLS)/kube bin/ingress-load -n $$n $(BENCH_FLAGS) \
	    -json bin/bench/load-$$n$(BENCH_PROTOCOL)$$([ $(BENCH_RUNS) = 1 ] || echo -$$r).json -cmd '$(BENCH_CMD)' || exit 1; \
	done; done

## bench-report: the current tables of docs/benchmarks.md ("Results"), one
## per scale, from the load command's JSON (BENCH_JSON: bin/bench/*.json,
## else the runs the tables were made from): its runs replace those of
## their kinds (scale, protocol, fan-out clients) in docs/benchmark-runs/,
## and the tables are made from all that it then holds.
BENCH_JSON ?= $(or $(wildcard bin/bench/*.json),$(wildcard docs/benchmark-runs/*.json))
bench-report:
	$(GO) run ./hack/bench-report -keep docs/benchmark-runs -write docs/benchmarks.md $(BENCH_JSON)

## soak: TestSoak for SOAK (default 1h): two replicas, two Envoys, traffic,
## churn and faults against a real API server (docs/failure-modes.md).
SOAK ?= 1h
soak: tools
	INGRESS_XDS_SOAK=$(SOAK) KUBEBUILDER_ASSETS=$(TOOLS)/kube $(GO) test -count=1 -v -timeout 0 -run '^TestSoak$$' ./e2e/

## e2e-kind: the kind suite alone (docs/kind.md): starts dockerd if none runs,
## builds and caches every image locally, creates a cluster, applies deploy/
e2e-kind:
	bash e2e/kind/run.sh

## e2e-gateway-conformance: Gateway API's conformance suite on a kind cluster
## (docs/gateway-api.md, "Conformance"): the install and the kind suite's
## routing check, then the suite; its report in bin/conformance-report.yaml
e2e-gateway-conformance:
	mkdir -p bin
	GO_TEST_FLAGS='-run TestKind/routing$$' CONFORMANCE_REPORT=$(CURDIR)/bin/conformance-report.yaml bash e2e/kind/run.sh

clean:
	rm -rf bin .demo
