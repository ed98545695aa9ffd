# otelcol-llm build and test entry points. `make run` and `make test` are the
# two commands the README promises; everything they need is installed here.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

GO          ?= go
VERSION     ?= 0.1.0
TOOLS_DIR   := $(CURDIR)/.tools
OCB_VERSION := v0.165.0
OCB         := $(TOOLS_DIR)/ocb-$(OCB_VERSION)
DIST_DIR    := cmd/otelcol-llm
BIN         := $(DIST_DIR)/otelcol-llm
IMAGE       ?= otelcol-llm:$(VERSION)
HELM_VERSION := v3.22.0
HELM        := $(TOOLS_DIR)/helm-$(HELM_VERSION)
# Jaeger v2, the end-to-end tests' tracing backend: a Go tool of its own
# module (tools/jaeger, whose go.sum pins every dependency), since its go.mod
# has a replace directive and `go install ...@version` refuses it.
JAEGER_VERSION := v1.75.0
JAEGER      := $(TOOLS_DIR)/jaeger-$(JAEGER_VERSION)
# Debian packages that tests need as real servers or tools; installed with
# apt-get when missing (sudo when not root).
SUDO        := $(if $(filter 0,$(shell id -u)),,sudo)

# Everything that ends up in the binary: the component and shared packages
# (code and embedded files, not tests, docs or test data), the root package,
# the shipped configs, the builder manifest and the module files.
SRC_DIRS := receivers processors connectors exporters extensions providers internal
SOURCES  := $(shell find $(SRC_DIRS) -name testdata -prune -o -type f -not -name '*_test.go' -not -name '*.md' -print 2>/dev/null) \
            $(wildcard *.go) $(wildcard configs/*.yaml) builder-config.yaml go.mod go.sum

# Listeners of the default configuration. `make run` passes them to the
# collector and prints them, so the banner and the config cannot disagree.
OTELCOL_LLM_LISTEN_HOST    ?= 127.0.0.1
OTELCOL_LLM_OTLP_GRPC_PORT ?= 4317
OTELCOL_LLM_OTLP_HTTP_PORT ?= 4318
OTELCOL_LLM_HEALTH_PORT    ?= 13133
OTELCOL_LLM_METRICS_PORT   ?= 8888
export OTELCOL_LLM_LISTEN_HOST OTELCOL_LLM_OTLP_GRPC_PORT OTELCOL_LLM_OTLP_HTTP_PORT OTELCOL_LLM_HEALTH_PORT OTELCOL_LLM_METRICS_PORT

# Packages of the root module with tests; the generated module under
# cmd/otelcol-llm is a separate module and `./...` does not descend into it.
E2E_PKG := ./test/e2e/...

# go-nvml wraps NVML functions that NVML 13 marks deprecated; keep the C
# compiler's warnings about them out of every build and test log.
export CGO_CFLAGS ?= -Wno-deprecated-declarations

.PHONY: tools jaeger build run test lint vet gofmt-check fmt unit fuzz-short fuzz soak e2e deploy-test chart-test rules-test prometheus chromium locust bench bench-go bench-anchors mockllm gpu-check docker clean distclean

## tools: install the pinned ocb and helm, and build the pinned Jaeger, into .tools/
tools: $(OCB) $(HELM) $(JAEGER)

$(OCB):
	mkdir -p $(TOOLS_DIR)
	GOBIN=$(TOOLS_DIR) $(GO) install go.opentelemetry.io/collector/cmd/builder@$(OCB_VERSION)
	mv $(TOOLS_DIR)/builder $@

$(HELM):
	mkdir -p $(TOOLS_DIR)
	GOBIN=$(TOOLS_DIR) $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)
	mv $(TOOLS_DIR)/helm $@

## jaeger: build the pinned Jaeger v2 (tools/jaeger) into .tools/ (once; the end-to-end tests and bench/jaeger run it)
jaeger: $(JAEGER)

$(JAEGER): tools/jaeger/go.mod tools/jaeger/go.sum
	@grep -q 'github.com/jaegertracing/jaeger $(JAEGER_VERSION)' tools/jaeger/go.mod \
	  || { echo "tools/jaeger/go.mod does not require github.com/jaegertracing/jaeger $(JAEGER_VERSION)"; exit 1; }
	@mkdir -p $(TOOLS_DIR)
	@echo "building Jaeger $(JAEGER_VERSION) into $@ (a few minutes the first time)"
	@start=$$(date +%s); \
	  cd tools/jaeger && CGO_ENABLED=0 $(GO) build -trimpath -o $@.tmp github.com/jaegertracing/jaeger/cmd/jaeger; \
	  mv $@.tmp $@; echo "built $@ in $$(( $$(date +%s) - start )) s"

## prometheus: install Prometheus and promtool from Debian's packages when missing
prometheus:
	@command -v prometheus >/dev/null && command -v promtool >/dev/null || { \
	  $(SUDO) apt-get update -q && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends prometheus; }

## chromium: install Debian's headless Chromium when missing (the HTML report test opens the report in it)
chromium:
	@command -v chromium >/dev/null || { \
	  $(SUDO) apt-get update -q && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium; }

## build: generate cmd/otelcol-llm with ocb and compile the otelcol-llm binary (skipped when nothing changed)
build: $(BIN)

$(BIN): $(OCB) $(SOURCES)
	mkdir -p cmd
	flock $(TOOLS_DIR)/build.lock sh -c '$(OCB) --config builder-config.yaml > $(TOOLS_DIR)/build.log 2>&1' \
	  || { tail -n 40 $(TOOLS_DIR)/build.log; exit 1; }
	touch $@
	@echo "built $@ ($$(du -h $@ | cut -f1))"

## run: build, then run the main job on the embedded default config: a one-minute streaming load test with a verdict
run: build
	@echo "otelcol-llm $(VERSION): builtin:default (configs/default.yaml, compiled in): a one-minute streaming"
	@echo "  load test of the built-in mock model (mock_llm on 127.0.0.1:$${OTELCOL_LLM_MOCK_PORT:-18000}); set OTELCOL_LLM_TARGET_URL"
	@echo "  (and OTELCOL_LLM_TARGET_MODEL, OTELCOL_LLM_API_KEY) to test a real endpoint; other configs: --config builtin:list"
	exec ./$(BIN) --config builtin:default

# Each stage of `make test` (also run alone: `make unit`, `make e2e`, ...)
# runs under scripts/stage, which keeps the stage's whole output in
# .tools/logs/<stage>.log and prints one summary line at its end, the failing
# tests and their output before it; STAGE_VERBOSE=1 streams the output too.
# STAGE_RUN names this make run, so that the last step of `make test` sums
# the counts of this run's stages only.
STAGE_BIN  := $(TOOLS_DIR)/stage
STAGE_LOGS := $(TOOLS_DIR)/logs
STAGE      := $(STAGE_BIN) -logs $(STAGE_LOGS)
ifndef STAGE_RUN
STAGE_RUN := $(shell date +%s%N)
endif
export STAGE_RUN

$(STAGE_BIN): $(filter-out %_test.go,$(wildcard scripts/stage/*.go))
	@mkdir -p $(TOOLS_DIR)
	@$(GO) build -o $@ ./scripts/stage

## test: lint, unit tests with -race, every fuzz target briefly, end-to-end tests against the built binary, deployment checks
## (stops at the first failing stage; the last line of a passing run is `N passed, 0 failed`)
test: lint unit fuzz-short e2e deploy-test
	@$(STAGE) -total lint unit fuzz-short e2e deploy-test

# FUZZTIME is how long `make fuzz` runs each fuzz target; `make test` runs each
# for a fixed number of inputs (FUZZ_SHORT), which sets no deadline and so is
# not exposed to the fuzz coordinator's deadline race (see scripts/fuzz.sh).
FUZZTIME ?= 5m
FUZZ_SHORT ?= 5000x
SOAK_MINUTES ?= 10

fuzz-short: $(STAGE_BIN)
	@$(STAGE) fuzz-short -- scripts/fuzz.sh $(FUZZ_SHORT)

## fuzz: every fuzz target for FUZZTIME each (default 5m); failing inputs land under testdata/fuzz/
fuzz:
	scripts/fuzz.sh $(FUZZTIME)

## soak: the gateway under steady synthetic load for SOAK_MINUTES (default 10), sampling RSS and goroutines; fails on growth (not in make test)
soak: build
	OTELCOL_LLM_BINARY=$(CURDIR)/$(BIN) scripts/soak.sh $(SOAK_MINUTES)

fmt:
	gofmt -w $$(git ls-files '*.go' | grep -v '^$(DIST_DIR)/')

lint: $(STAGE_BIN)
	@$(STAGE) lint -- $(MAKE) --no-print-directory vet gofmt-check

gofmt-check:
	@out=$$(gofmt -l $$(find . \( -path ./$(DIST_DIR) -o -path ./.tools \) -prune -o -name '*.go' -print)); \
	  if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	$(GO) vet -tags e2e $(E2E_PKG)
	cd deploy/helm/test && $(GO) vet ./...

unit: chromium $(STAGE_BIN)
	@$(STAGE) unit -- $(GO) test -json -race -count=1 ./...

e2e: build prometheus $(JAEGER) $(STAGE_BIN)
	@OTELCOL_LLM_BINARY=$(CURDIR)/$(BIN) PROMETHEUS=$$(command -v prometheus) JAEGER=$(JAEGER) \
	  $(STAGE) e2e -- $(GO) test -json -tags e2e -count=1 -timeout 20m $(E2E_PKG)

## deploy-test: the Helm chart and the Prometheus rules, checked without a cluster
# The prerequisites are made first, so that GOFLAGS=-json (for the chart
# test's go test events) reaches no other go command.
deploy-test: $(HELM) build prometheus $(STAGE_BIN)
	@GOFLAGS=-json $(STAGE) deploy-test -- $(MAKE) --no-print-directory chart-test rules-test

chart-test: $(HELM) build
	cd deploy/helm/test && HELM=$(HELM) OTELCOL_LLM_BINARY=$(CURDIR)/$(BIN) $(GO) test -count=1 ./...

rules-test: prometheus
	promtool check rules deploy/prometheus/rules.yaml
	cd deploy/prometheus && promtool test rules rules_test.yaml

## bench: every benchmark of the root module, then the anchor comparisons that run outside it
bench: bench-go bench-anchors

bench-go: locust
	$(GO) test -run '^$$' -bench . -benchmem -count=1 -timeout 60m ./...

# llm_semconv vs OTTL (contrib transformprocessor in its own module under
# bench/ottl), llm_loadgen vs telemetrygen through the built collector,
# builtin:gateway vs a plain collector (with each component's marginal cost),
# and a span explosion into Jaeger directly vs through builtin:gateway.
bench-anchors: build $(JAEGER)
	bench/ottl/compare.sh 3 2000x
	receivers/llmloadgenreceiver/scripts/compare-telemetrygen.sh 15 3
	bench/gateway/compare.sh 20 3
	JAEGER=$(JAEGER) bench/jaeger/compare.sh

## locust: install Debian's Locust when missing (the live-mode benchmark runs it against mockllm)
locust:
	@command -v locust >/dev/null || { \
	  $(SUDO) apt-get update -q && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3-locust; }

## mockllm: build the OpenAI-compatible mock server into bin/mockllm
mockllm:
	$(GO) build -o bin/mockllm ./cmd/mockllm

## gpu-check: real-hardware check of nvidia_gpu against nvidia-smi (needs an NVIDIA GPU; not part of make test)
gpu-check:
	./scripts/gpu-check.sh

## docker: build the container image (needs a Docker engine)
docker:
	docker build -t $(IMAGE) --build-arg VERSION=$(VERSION) .

clean:
	rm -rf $(DIST_DIR) bin

distclean: clean
	rm -rf $(TOOLS_DIR)
