#!/usr/bin/env bash
# Soak test of the gateway (make soak; not part of make test or CI).
#
#   scripts/soak.sh [minutes]          (default 10)
#
# Runs three otelcol-llm processes on loopback for the given time:
#   load:    llm_loadgen, realtime, a steady Poisson load (SOAK_RATE requests/s,
#            default 100) of chat, RAG, agent and embeddings traffic with
#            faults, GenAI metrics and inference-details log events, exported
#            over OTLP/gRPC to the gateway;
#   gateway: builtin:gateway, the process under test (memory_limiter,
#            llm_semconv, llm_metrics, span_guard, sending queue on
#            file_storage), plus the pprof extension;
#   backend: an OTLP receiver into a silent debug exporter, the gateway's
#            upstream.
# At the end the load stops first, then the gateway (which flushes to the
# backend), then the backend.
# Every SOAK_INTERVAL seconds (default 5) it appends to a CSV: the gateway's
# RSS (/proc/<pid>/status), goroutines (pprof), Go heap in use and span
# counters (its own /metrics), and the load process's RSS.
#
# Verdict, on the samples after a warm-up (max(45 s, a tenth of the run),
# which covers span_guard's 30 s trace window filling up), split in thirds:
#   RSS:        median of the last third <= 1.20 x median of the first third + 16 MiB
#   goroutines: median of the last third <= 1.10 x median of the first third + 5
#   progress:   the gateway forwarded spans during the last third, and
#               both processes are alive at the end.
# Exit status: 0 pass, 1 a check failed, 2 setup error.
set -euo pipefail
cd "$(dirname "$0")/.."

MINUTES=${1:-10}
RATE=${SOAK_RATE:-100}
INTERVAL=${SOAK_INTERVAL:-5}
BASE=${SOAK_BASE_PORT:-21300} # below the usual ephemeral range (32768-60999)
BIN=${OTELCOL_LLM_BINARY:-cmd/otelcol-llm/otelcol-llm}
OUT=${SOAK_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/otelcol-llm-soak.XXXXXX")}
CSV=$OUT/soak.csv

if ! [[ $MINUTES =~ ^[0-9]+$ ]] || [ "$MINUTES" -lt 1 ]; then
  echo "soak: minutes must be a whole number >= 1, got '$MINUTES'" >&2
  exit 2
fi
if [ ! -x "$BIN" ]; then
  echo "soak: $BIN is missing; run make build (or set OTELCOL_LLM_BINARY)" >&2
  exit 2
fi
mkdir -p "$OUT/storage"

# Ports: gateway OTLP gRPC/HTTP, health, self-metrics, Prometheus, pprof;
# load health; backend health and OTLP gRPC.
G_GRPC=$BASE G_HTTP=$((BASE + 1)) G_HEALTH=$((BASE + 2)) G_METRICS=$((BASE + 3)) G_PROM=$((BASE + 4)) G_PPROF=$((BASE + 5))
L_HEALTH=$((BASE + 6)) B_HEALTH=$((BASE + 7)) B_SINK=$((BASE + 8))
for p in $(seq "$BASE" $((BASE + 8))); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    echo "soak: port $p on 127.0.0.1 is in use; set SOAK_BASE_PORT to a free range of 9 ports" >&2
    exit 2
  fi
done

cat >"$OUT/gateway-overlay.yaml" <<EOF
extensions:
  pprof:
    endpoint: 127.0.0.1:$G_PPROF
service:
  extensions: [health_check, file_storage, pprof]
  telemetry:
    logs:
      level: warn
EOF

cat >"$OUT/load.yaml" <<EOF
extensions:
  health_check:
    endpoint: 127.0.0.1:$L_HEALTH
receivers:
  llm_loadgen:
    mode: synthetic
    timing: realtime
    seed: 99
    requests: 0
    arrival: {type: poisson, rate: $RATE}
    scenarios:
      - {type: chat, weight: 6}
      - {type: rag, weight: 2}
      - {type: agent, weight: 1}
      - {type: embeddings, weight: 1}
    faults:
      - {type: rate_limit, probability: 0.02, retry_after: 1s, max_retries: 2}
      - {type: overloaded, probability: 0.01}
      - {type: mid_stream, probability: 0.01}
      - {type: cancel, probability: 0.01}
    logs: {inference_details: true}
    metrics: {interval: 10s}
    progress_interval: 0s
exporters:
  otlp_grpc/gateway:
    endpoint: 127.0.0.1:$G_GRPC
    tls: {insecure: true}
service:
  extensions: [health_check]
  telemetry:
    logs: {level: warn}
    metrics: {level: none}
  pipelines:
    traces: {receivers: [llm_loadgen], exporters: [otlp_grpc/gateway]}
    metrics: {receivers: [llm_loadgen], exporters: [otlp_grpc/gateway]}
    logs: {receivers: [llm_loadgen], exporters: [otlp_grpc/gateway]}
EOF

cat >"$OUT/backend.yaml" <<EOF
extensions:
  health_check:
    endpoint: 127.0.0.1:$B_HEALTH
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:$B_SINK
exporters:
  debug:
    verbosity: basic
service:
  extensions: [health_check]
  telemetry:
    logs: {level: warn}
    metrics: {level: none}
  pipelines:
    traces: {receivers: [otlp], exporters: [debug]}
    metrics: {receivers: [otlp], exporters: [debug]}
    logs: {receivers: [otlp], exporters: [debug]}
EOF

G_PID= L_PID= B_PID=
stop() { # pid: SIGTERM, up to 20 s to exit, then SIGKILL
  [ -n "$1" ] || return 0
  kill -TERM "$1" 2>/dev/null || return 0
  for _ in $(seq 1 200); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null || true
}
cleanup() { stop "$L_PID"; stop "$G_PID"; stop "$B_PID"; }
trap cleanup EXIT

"$BIN" --config "file:$OUT/backend.yaml" >"$OUT/backend.log" 2>&1 &
B_PID=$!

OTELCOL_LLM_LISTEN_HOST=127.0.0.1 OTELCOL_LLM_OTLP_GRPC_PORT=$G_GRPC OTELCOL_LLM_OTLP_HTTP_PORT=$G_HTTP \
OTELCOL_LLM_HEALTH_PORT=$G_HEALTH OTELCOL_LLM_METRICS_PORT=$G_METRICS OTELCOL_LLM_PROM_PORT=$G_PROM \
OTELCOL_LLM_STORAGE_DIR=$OUT/storage OTELCOL_LLM_UPSTREAM_ENDPOINT=127.0.0.1:$B_SINK \
  "$BIN" --config builtin:gateway --config "file:$OUT/gateway-overlay.yaml" >"$OUT/gateway.log" 2>&1 &
G_PID=$!
"$BIN" --config "file:$OUT/load.yaml" >"$OUT/load.log" 2>&1 &
L_PID=$!

wait_healthy() { # name port pid log
  for _ in $(seq 1 300); do
    if ! kill -0 "$3" 2>/dev/null; then
      echo "soak: the $1 process exited during startup:" >&2; tail -n 20 "$4" >&2; exit 2
    fi
    curl -fs -o /dev/null "http://127.0.0.1:$2/" && return 0
    sleep 0.1
  done
  echo "soak: the $1 process was not healthy within 30 s" >&2; tail -n 20 "$4" >&2; exit 2
}
wait_healthy backend "$B_HEALTH" "$B_PID" "$OUT/backend.log"
wait_healthy gateway "$G_HEALTH" "$G_PID" "$OUT/gateway.log"
wait_healthy load "$L_HEALTH" "$L_PID" "$OUT/load.log"

rss_of() { awk '/^VmRSS:/ {print $2 * 1024}' "/proc/$1/status" 2>/dev/null || echo ""; }
metric() { # exposition name [label-substring]: sum of the samples
  awk -v n="$2" -v m="${3:-}" '
    index($0, n) == 1 {
      rest = substr($0, length(n) + 1)
      if (rest !~ /^(_total)?[ {]/) next
      if (m != "" && index($0, m) == 0) next
      s += $NF; found = 1
    }
    END { if (found) printf "%.0f\n", s; else print "" }' <<<"$1"
}

echo "elapsed_s,gateway_rss_bytes,gateway_goroutines,gateway_heap_alloc_bytes,span_guard_received,spans_exported,load_rss_bytes" >"$CSV"
echo "soak: $MINUTES min at $RATE requests/s; gateway pid $G_PID, load pid $L_PID, backend pid $B_PID; samples every ${INTERVAL}s in $CSV"
START=$(date +%s)
END=$((START + MINUTES * 60))
while [ "$(date +%s)" -lt "$END" ]; do
  for pid in $G_PID $L_PID $B_PID; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "soak: FAIL: process $pid died during the run" >&2
      tail -n 30 "$OUT/gateway.log" "$OUT/load.log" "$OUT/backend.log" >&2
      exit 1
    fi
  done
  NOW=$(date +%s)
  SELF=$(curl -fs --max-time 5 "http://127.0.0.1:$G_METRICS/metrics" || true)
  GOR=$(curl -fs --max-time 5 "http://127.0.0.1:$G_PPROF/debug/pprof/goroutine?debug=1" | awk 'NR == 1 {print $NF}' || true)
  echo "$((NOW - START)),$(rss_of "$G_PID"),$GOR,$(metric "$SELF" otelcol_process_runtime_heap_alloc_bytes),$(metric "$SELF" otelcol_span_guard_spans_received),$(metric "$SELF" otelcol_exporter_sent_spans 'exporter="otlp_grpc/upstream"'),$(rss_of "$L_PID")" >>"$CSV"
  sleep "$INTERVAL"
done

WARMUP=$(( MINUTES * 6 > 45 ? MINUTES * 6 : 45 ))
awk -F, -v warm="$WARMUP" '
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  NR > 1 && $1 >= warm && $2 != "" && $3 != "" && $6 != "" { n++; t[n] = $1; r[n] = $2; g[n] = $3; e[n] = $6 }
  END {
    if (n < 6) { print "soak: only " n " samples after the " warm " s warm-up; run longer"; exit 2 }
    k = int(n / 3)
    for (i = 1; i <= k; i++) { r1[i] = r[i]; g1[i] = g[i]; r3[i] = r[n - k + i]; g3[i] = g[n - k + i] }
    mr1 = median(r1, k); mr3 = median(r3, k); mg1 = median(g1, k); mg3 = median(g3, k)
    rlim = 1.20 * mr1 + 16 * 1048576; glim = 1.10 * mg1 + 5
    progress = e[n] - e[n - k + 1]
    printf "soak: %d samples after a %d s warm-up, thirds of %d\n", n, warm, k
    printf "soak: RSS median %.1f MiB (first third) -> %.1f MiB (last third), limit %.1f MiB\n", mr1 / 1048576, mr3 / 1048576, rlim / 1048576
    printf "soak: goroutines median %d (first third) -> %d (last third), limit %.1f\n", mg1, mg3, glim
    printf "soak: spans forwarded during the last third: %d (%.0f spans/s)\n", progress, progress / (t[n] - t[n - k + 1])
    fail = 0
    if (mr3 > rlim) { print "soak: FAIL: RSS grew beyond the tolerance"; fail = 1 }
    if (mg3 > glim) { print "soak: FAIL: goroutines grew beyond the tolerance"; fail = 1 }
    if (progress <= 0) { print "soak: FAIL: the gateway forwarded nothing in the last third"; fail = 1 }
    exit fail
  }' "$CSV" && STATUS=0 || STATUS=$?
for pid in $G_PID $L_PID $B_PID; do
  if ! kill -0 "$pid" 2>/dev/null; then echo "soak: FAIL: process $pid is not running at the end" >&2; STATUS=1; fi
done
# The gateway logs at warn: anything it logged at error level during the
# run (a dropped export, a panic) fails the soak.
if grep -q -E $'\t(error|panic|fatal)\t' "$OUT/gateway.log"; then
  echo "soak: FAIL: the gateway logged errors:" >&2
  grep -E $'\t(error|panic|fatal)\t' "$OUT/gateway.log" | cut -c1-300 | head -n 5 >&2
  STATUS=1
fi
[ "$STATUS" -eq 0 ] && echo "soak: PASS ($CSV)" || echo "soak: FAIL ($CSV, logs in $OUT)"
exit "$STATUS"
