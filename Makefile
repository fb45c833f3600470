# ingress-xds: `make demo` to see it work, `make test` to run every test.
SHELL := /bin/bash
GO ?= go
export GOTOOLCHAIN := local
export GOFLAGS := -mod=mod -buildvcs=false
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
TOOLS := $(CURDIR)/.tools
export INGRESS_XDS_TOOLS := $(TOOLS)

.PHONY: all build tools test unit golden demo bench e2e-kind clean

all: build

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o bin/ingress-xds ./cmd/ingress-xds
	$(GO) build -o bin/echo ./e2e/cmd/echo

## tools: Envoy, grpcurl, kube-apiserver and etcd (cached in ~/.cache)
tools:
	bash hack/install-tools.sh

## test: every test (unit, golden, real API server, real Envoy)
test: tools build
	KUBEBUILDER_ASSETS=$(TOOLS)/kube $(GO) test -count=1 -timeout 30m ./...
	bash hack/demo.sh --check

## unit: the tests that need no external binary
unit:
	$(GO) test -count=1 -short ./...

## golden: regenerate the translator's golden files
golden:
	$(GO) test ./translate -run TestGolden -update

## demo: control plane on examples/, a real Envoy on :8080, two echo backends
demo: tools build
	bash hack/demo.sh

bench: tools build
	KUBEBUILDER_ASSETS=$(TOOLS)/kube $(GO) test -run '^$$' -bench . -benchmem ./translate

e2e-kind:
	bash e2e/kind/run.sh

clean:
	rm -rf bin .demo
