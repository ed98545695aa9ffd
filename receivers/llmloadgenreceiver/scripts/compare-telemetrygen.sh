#!/usr/bin/env bash
# Side-by-side throughput of telemetrygen and llm_loadgen, in one run, on this
# machine, both into the built collector and a (sampled) debug exporter:
#
#   A: telemetrygen (pinned go install of contrib's cmd/telemetrygen) at full
#      speed -> OTLP/gRPC -> otlp receiver -> batch -> debug
#   B: llm_loadgen (synthetic, as_fast_as_possible, chat) -> batch -> debug
#
# Spans are counted where they are delivered (otelcol_exporter_sent_spans of
# the collector's own metrics), never by the generator's own claim. CPU is
# the user+system time of every process involved (telemetrygen and the
# collector for A, the collector for B).
#
# Usage: compare-telemetrygen.sh [seconds]   (from the repository root)
# Env:   OTELCOL_LLM_BINARY (default cmd/otelcol-llm/otelcol-llm),
#        TELEMETRYGEN_VERSION (default v0.165.1, the release this project pins),
#        TELEMETRYGEN_WORKERS (default: number of CPUs).
set -euo pipefail

secs=${1:-20}
root=$(cd "$(dirname "$0")/../../.." && pwd)
bin=${OTELCOL_LLM_BINARY:-$root/cmd/otelcol-llm/otelcol-llm}
version=${TELEMETRYGEN_VERSION:-v0.165.1}
tools=$root/.tools/telemetrygen-$version
tg=$tools/telemetrygen
workers=${TELEMETRYGEN_WORKERS:-$(nproc)}

[[ -x $bin ]] || { echo "collector binary $bin not found: run make build" >&2; exit 1; }

if [[ ! -x $tg ]]; then
  mkdir -p "$tools"
  if ! err=$(GOBIN=$tools go install "github.com/open-telemetry/opentelemetry-collector-contrib/cmd/telemetrygen@$version" 2>&1); then
    echo "SKIPPED telemetrygen side: go install cmd/telemetrygen@$version failed:"
    echo "$err" | sed 's/^/  /'
    tg=""
  fi
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu_of() { awk '{print $14+$15}' "/proc/$1/stat"; }   # clock ticks
tck=$(getconf CLK_TCK)
work=$(mktemp -d)
trap '[[ -n ${KEEP:-} ]] && echo "logs kept in $work" || rm -rf "$work"' EXIT

common_service() {
  cat <<YAML
processors:
  batch:
    send_batch_size: 8192
    timeout: 200ms
exporters:
  debug:
    verbosity: basic
    sampling_initial: 1
    sampling_thereafter: 100000
service:
  telemetry:
    logs: {level: warn}
    metrics:
      level: normal
      readers:
        - pull: {exporter: {prometheus: {host: 127.0.0.1, port: $1}}}
YAML
}

sent_spans() {
  curl -s "http://127.0.0.1:$1/metrics" | awk '/^otelcol_exporter_sent_spans(_total)?\{/ {s+=$NF} END {printf "%d\n", s}'
}

# run_collector name config_file -> prints "spans cpu_seconds wall_seconds"
measure() {
  local name=$1 cfg=$2 mport=$3 gen_cmd=${4:-}
  "$bin" --config "file:$cfg" >"$work/$name.log" 2>&1 &
  local pid=$!
  sleep 2
  local c0 t0 g0=0 gpid=""
  c0=$(cpu_of $pid); t0=$(date +%s.%N)
  if [[ -n $gen_cmd ]]; then
    bash -c "$gen_cmd" >"$work/$name.gen.log" 2>&1 &
    gpid=$!
  fi
  sleep "$secs"
  local spans c1 t1 gcpu=0
  spans=$(sent_spans "$mport"); c1=$(cpu_of $pid); t1=$(date +%s.%N)
  if [[ -n $gpid ]]; then
    gcpu=$(awk '{print $14+$15+$16+$17}' "/proc/$gpid/stat" 2>/dev/null || echo 0)
    kill "$gpid" 2>/dev/null || true; wait "$gpid" 2>/dev/null || true
  fi
  kill "$pid"; wait "$pid" 2>/dev/null || true
  awk -v s="$spans" -v c=$((c1 - c0 + gcpu)) -v k="$tck" -v w="$(echo "$t1 - $t0" | bc)" \
    'BEGIN {printf "%d %.3f %.3f\n", s, c/k, w}'
}

report() { # name spans cpu wall
  awk -v n="$1" -v s="$2" -v c="$3" -v w="$4" 'BEGIN {
    printf "%-28s %12d spans %10.0f spans/s %8.2f CPU-s/M spans %12.0f spans/CPU-s\n", n, s, s/w, (s>0 ? c*1e6/s : 0), (c>0 ? s/c : 0) }'
}

echo "compare-telemetrygen: $(date -u +%FT%TZ) on $(nproc) CPUs, ${secs}s per side, collector $bin"

# B: llm_loadgen inside the collector.
pb=$(free_port)
{ cat <<YAML
receivers:
  llm_loadgen:
    timing: as_fast_as_possible
    seed: 1
    batch_size: 1000
    progress_interval: 0s
    scenarios: [{type: chat, weight: 1}]
YAML
  common_service "$pb"
  cat <<YAML
  pipelines:
    traces: {receivers: [llm_loadgen], processors: [batch], exporters: [debug]}
YAML
} >"$work/b.yaml"
read -r bs bc bw < <(measure llm_loadgen "$work/b.yaml" "$pb")
report "llm_loadgen (chat)" "$bs" "$bc" "$bw"

if [[ -n $tg ]]; then
  pa=$(free_port); og=$(free_port)
  { cat <<YAML
receivers:
  otlp:
    protocols: {grpc: {endpoint: 127.0.0.1:$og}}
YAML
    common_service "$pa"
    cat <<YAML
  pipelines:
    traces: {receivers: [otlp], processors: [batch], exporters: [debug]}
YAML
  } >"$work/a.yaml"
  read -r as ac aw < <(measure telemetrygen "$work/a.yaml" "$pa" \
    "$tg traces --otlp-insecure --otlp-endpoint 127.0.0.1:$og --workers $workers --rate 0 --duration $((secs + 5))s --child-spans 1")
  report "telemetrygen $version" "$as" "$ac" "$aw"
  awk -v bs="$bs" -v bc="$bc" -v as="$as" -v ac="$ac" 'BEGIN {
    if (as > 0 && ac > 0 && bc > 0) printf "ratio (llm_loadgen / telemetrygen spans per CPU-second): %.2fx\n", (bs/bc)/(as/ac) }'
fi
