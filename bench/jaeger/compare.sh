#!/usr/bin/env bash
# The span explosion on a real tracing backend, side by side in one run:
# the same load into Jaeger v2 (in-memory store, max_traces 100,000, as
# test/e2e/testdata/jaeger.yaml configures it) directly and through
# builtin:gateway, each variant on a fresh Jaeger:
#
#   direct         llm load straight into Jaeger's OTLP receiver
#   no_span_guard  through builtin:gateway without span_guard
#   gateway        through builtin:gateway as shipped (10,000 spans per trace)
#   gateway_1000   through builtin:gateway with a budget of 1,000 spans per trace
#
# The load is the explosion test's generator (test/e2e): one runaway agent
# trace of AGENT_SPANS spans (default 1,000,000) in requests of 5,000 spans,
# then STREAMS (default 100) per-token traces of TOKENS (default 2,000) token
# spans plus a chat and a server span. Jaeger's RSS is sampled from /proc
# every 250 ms; once Jaeger has stored everything it was sent (its storage
# exporter's own count), the largest trace is fetched FETCHES times (default
# 3) from /api/traces/{id}, the call the Jaeger UI makes, and once from
# /api/v3/traces/{id}. The table gives the spans stored, Jaeger's RSS with
# everything stored and at its peak, what the UI's call returns and how long
# it takes, and the ratio of direct to the shipped gateway.
#
# It is BenchmarkJaegerExplosion in test/e2e (build tag e2e), so it shares
# the end-to-end tests' harness: loopback only, ports below the ephemeral
# range.
#
# Usage: bench/jaeger/compare.sh (from anywhere in the repository)
# Env:   OTELCOL_LLM_BINARY (default cmd/otelcol-llm/otelcol-llm),
#        JAEGER (default .tools/jaeger-v1.75.0: `make jaeger`),
#        VARIANTS (space-separated subset), AGENT_SPANS, STREAMS, TOKENS,
#        FETCHES, FETCH_TIMEOUT (default 5m: a fetch that takes longer is
#        reported as failed)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${OTELCOL_LLM_BINARY:-$root/cmd/otelcol-llm/otelcol-llm}
jaeger=${JAEGER:-$root/.tools/jaeger-v1.75.0}
[[ -x $bin ]] || { echo "collector binary $bin not found: run make build" >&2; exit 1; }
[[ -x $jaeger ]] || { echo "jaeger binary $jaeger not found: run make jaeger" >&2; exit 1; }

cd "$root"
export OTELCOL_LLM_BINARY=$bin JAEGER=$jaeger
export JAEGER_BENCH_VARIANTS=${VARIANTS:-} JAEGER_BENCH_AGENT_SPANS=${AGENT_SPANS:-1000000}
export JAEGER_BENCH_STREAMS=${STREAMS:-100} JAEGER_BENCH_TOKENS=${TOKENS:-2000}
export JAEGER_BENCH_FETCHES=${FETCHES:-3} JAEGER_BENCH_FETCH_TIMEOUT=${FETCH_TIMEOUT:-5m}
echo "bench/jaeger/compare.sh on $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M UTC')"
exec go test -tags e2e -count=1 -run '^$' -bench '^BenchmarkJaegerExplosion$' -benchtime 1x -timeout 90m ./test/e2e/
