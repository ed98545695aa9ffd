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

# Everything that ends up in the binary: our Go packages (not tests), the files
# they embed, the builder manifest and the module files. The generated module
# and the tools folder are not inputs.
SOURCES := $(shell find . \( -path ./$(DIST_DIR) -o -path ./.tools -o -path ./.git -o -name testdata \) -prune -o \
             -type f \( -name '*.go' -o -name '*.yaml' -o -name '*.tmpl' -o -name '*.json' \) -not -name '*_test.go' -print) \
           $(wildcard testdata/configs/*.yaml)

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

.PHONY: tools build run test lint vet fmt unit e2e bench docker clean distclean

## tools: install the pinned ocb into .tools/
tools: $(OCB)

$(OCB):
	mkdir -p $(TOOLS_DIR)
	GOBIN=$(TOOLS_DIR) $(GO) install go.opentelemetry.io/collector/cmd/builder@$(OCB_VERSION)
	mv $(TOOLS_DIR)/builder $@

## build: generate cmd/otelcol-llm with ocb and compile the otelcol-llm binary (skipped when nothing changed)
build: $(BIN)

$(BIN): $(OCB) $(SOURCES) go.mod go.sum
	mkdir -p cmd
	flock $(TOOLS_DIR)/build.lock $(OCB) --config builder-config.yaml > $(TOOLS_DIR)/build.log 2>&1 \
	  || { tail -n 40 $(TOOLS_DIR)/build.log; exit 1; }
	touch $@
	@echo "built $@ ($$(du -h $@ | cut -f1))"

## run: build, then start the collector on the embedded default config
run: build
	@echo "otelcol-llm $(VERSION): config builtin:default (testdata/configs/default.yaml, compiled in)"
	@echo "  OTLP/gRPC      $(OTELCOL_LLM_LISTEN_HOST):$(OTELCOL_LLM_OTLP_GRPC_PORT)"
	@echo "  OTLP/HTTP      http://$(OTELCOL_LLM_LISTEN_HOST):$(OTELCOL_LLM_OTLP_HTTP_PORT)/v1/{traces,metrics,logs}"
	@echo "  health check   http://$(OTELCOL_LLM_LISTEN_HOST):$(OTELCOL_LLM_HEALTH_PORT)/"
	@echo "  self-metrics   http://$(OTELCOL_LLM_LISTEN_HOST):$(OTELCOL_LLM_METRICS_PORT)/metrics"
	@echo "  stop with Ctrl-C"
	exec ./$(BIN) --config builtin:default

## test: lint, unit tests with -race, then end-to-end tests against the built binary
test: lint unit e2e

fmt:
	gofmt -w $$(git ls-files '*.go' | grep -v '^$(DIST_DIR)/')

lint: vet
	@out=$$(gofmt -l $$(find . \( -path ./$(DIST_DIR) -o -path ./.tools \) -prune -o -name '*.go' -print)); \
	  if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	$(GO) vet -tags e2e $(E2E_PKG)

unit:
	$(GO) test -race -count=1 ./...

e2e: build
	OTELCOL_LLM_BINARY=$(CURDIR)/$(BIN) $(GO) test -tags e2e -count=1 -timeout 20m $(E2E_PKG)

## bench: run every benchmark of the root module
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 -timeout 60m ./...

## docker: build the container image (needs a Docker engine)
docker:
	docker build -t $(IMAGE) --build-arg VERSION=$(VERSION) .

clean:
	rm -rf $(DIST_DIR)

distclean: clean
	rm -rf $(TOOLS_DIR)
