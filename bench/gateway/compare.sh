#!/usr/bin/env bash
# Gateway cost per span, side by side in one run, on this machine:
#
#   llm_loadgen (synthetic, as_fast_as_possible, OpenInference dialect,
#   chat 6 : rag 2 : agent 1) -> OTLP/gRPC -> gateway under test ->
#   OTLP/gRPC -> backend collector (otlp -> sampled debug)
#
# Every variant gets the same traffic (the same seed, mix and dialect): the
# generator runs as fast as the gateway accepts (its sending queue blocks
# when full, so nothing is dropped and the gateway runs saturated, which is
# how it is sized). With a rate (third argument) the generator runs in
# realtime at that many requests per second instead. The gateways:
#
#   plain        a plain collector: otlp -> batch -> otlp
#   shipped      builtin:gateway exactly as shipped
#   -llm_semconv builtin:gateway without llm_semconv
#   -llm_metrics builtin:gateway without the llm_metrics branch
#   -span_guard  builtin:gateway without span_guard in the guarded pipeline
#   disk_queue   builtin:gateway with every batch through the persistent
#                queue (spillover's primary set to its spill pipeline): the
#                cost of writing and reading back each span
#   zstd         builtin:gateway with zstd instead of gzip towards the backend
#                (OTELCOL_LLM_UPSTREAM_COMPRESSION=zstd)
#
# A variant is the shipped configuration plus an overlay (--config
# builtin:gateway --config file:overlay.yaml), so the table always measures
# what ships. Each line gives the gateway's user+system CPU (from /proc) over
# the window, the spans it accepted (otelcol_receiver_accepted_spans), the
# spans the backend accepted, CPU microseconds per span, and the gateway's
# peak RSS (VmHWM). The marginal cost of a component is shipped minus the
# variant without it.
#
# Usage: bench/gateway/compare.sh [seconds] [rounds] [requests_per_second]
#        (from the repository root; default 30 s windows, 1 round, as fast as
#        possible)
# Env:   OTELCOL_LLM_BINARY (default cmd/otelcol-llm/otelcol-llm),
#        BENCH_PORT_BASE (default 21400: ports BASE..BASE+10, below the
#        kernel's ephemeral range), VARIANTS (space-separated subset),
#        GATEWAY_FLAGS (more flags for every builtin:gateway variant, e.g.
#        --config file:extra.yaml to change one more setting),
#        PROFILE=1 (also write a 20 s CPU and a heap profile of the shipped
#        gateway under the same load to $PROFILE_DIR, default ./gateway-prof;
#        PROFILE="plain shipped" profiles each variant named, into
#        $PROFILE_DIR/VARIANT-cpu.pprof and VARIANT-heap.pprof)
set -euo pipefail

secs=${1:-30}
rounds=${2:-1}
rate=${3:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${OTELCOL_LLM_BINARY:-$root/cmd/otelcol-llm/otelcol-llm}
base=${BENCH_PORT_BASE:-21400}
variants=${VARIANTS:-"plain shipped -llm_semconv -llm_metrics -span_guard disk_queue zstd"}
[[ -x $bin ]] || { echo "collector binary $bin not found: run make build" >&2; exit 1; }

p_gw_grpc=$base p_gw_http=$((base + 1)) p_gw_metrics=$((base + 2)) p_gw_health=$((base + 3))
p_gw_prom=$((base + 4)) p_backend=$((base + 5)) p_backend_metrics=$((base + 6))
p_gen_metrics=$((base + 7)) p_gen_health=$((base + 8)) p_pprof=$((base + 9))
p_idle=$((base + 10))
tck=$(getconf CLK_TCK)
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [[ -n ${KEEP:-} ]] && echo "logs kept in $work" || rm -rf "$work"
}
trap cleanup EXIT

cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
peak_rss_mib() { awk '/^VmHWM/ {printf "%.0f", $2/1024}' "/proc/$1/status"; }
# metric_sum port name: the sum of every series of a counter on a metrics endpoint
metric_sum() {
  curl -s "http://127.0.0.1:$1/metrics" | awk -v n="$2" '$1 ~ "^"n"(_total)?[{ ]" || $1 == n || $1 == n"_total" {s+=$NF} END {printf "%d\n", s}'
}
wait_up() { # port: wait up to 30 s for a metrics endpoint
  for _ in $(seq 300); do
    curl -sf "http://127.0.0.1:$1/metrics" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "metrics endpoint on port $1 did not come up" >&2
  return 1
}
telemetry() { # port
  cat <<YAML
  telemetry:
    logs: {level: warn}
    metrics:
      level: normal
      readers:
        - pull: {exporter: {prometheus: {host: 127.0.0.1, port: $1}}}
YAML
}

cat >"$work/backend.yaml" <<YAML
receivers:
  otlp:
    protocols:
      grpc: {endpoint: 127.0.0.1:$p_backend}
exporters:
  debug:
    verbosity: basic
    sampling_initial: 1
    sampling_thereafter: 1000000
service:
$(telemetry "$p_backend_metrics")
  pipelines:
    traces: {receivers: [otlp], exporters: [debug]}
    metrics: {receivers: [otlp], exporters: [debug]}
    logs: {receivers: [otlp], exporters: [debug]}
YAML

cat >"$work/generator.yaml" <<YAML
extensions:
  health_check: {endpoint: 127.0.0.1:$p_gen_health}
receivers:
  llm_loadgen:
    mode: synthetic
$(if [[ -n $rate ]]; then echo "    timing: realtime"; echo "    arrival: {type: constant, rate: $rate}"; else echo "    timing: as_fast_as_possible"; fi)
    seed: 11
    semconv: openinference
    scenarios:
      - {type: chat, weight: 6}
      - {type: rag, weight: 2}
      - {type: agent, weight: 1}
    progress_interval: 0s
exporters:
  otlp_grpc:
    endpoint: 127.0.0.1:$p_gw_grpc
    tls: {insecure: true}
    sending_queue: {queue_size: 64, block_on_overflow: true}
service:
  extensions: [health_check]
$(telemetry "$p_gen_metrics")
  pipelines:
    traces: {receivers: [llm_loadgen], exporters: [otlp_grpc]}
YAML

cat >"$work/plain.yaml" <<YAML
receivers:
  otlp:
    protocols:
      grpc: {endpoint: 127.0.0.1:$p_gw_grpc}
processors:
  batch: {send_batch_size: 8192, timeout: 200ms}
exporters:
  otlp_grpc:
    endpoint: 127.0.0.1:$p_backend
    tls: {insecure: true}
service:
$(telemetry "$p_gw_metrics")
  pipelines:
    traces: {receivers: [otlp], processors: [batch], exporters: [otlp_grpc]}
YAML

# Overlays on builtin:gateway. Lists replace lists; a null removes a setting.
echo '{}' >"$work/shipped.yaml"
cat >"$work/-llm_semconv.yaml" <<'YAML'
service:
  pipelines:
    traces: {processors: [memory_limiter]}
YAML
# Without the llm_metrics branch, forward takes the tee's place; the
# traces/genai pipeline, which an overlay cannot remove, is fed by a receiver
# that gets nothing, so llm_metrics sees no span.
cat >"$work/-llm_metrics.yaml" <<YAML
connectors:
  forward: {}
receivers:
  otlp/idle:
    protocols:
      grpc: {endpoint: 127.0.0.1:$p_idle}
service:
  pipelines:
    traces: {exporters: [forward]}
    traces/genai: {receivers: [otlp/idle]}
    traces/guarded: {receivers: [forward]}
YAML
cat >"$work/-span_guard.yaml" <<'YAML'
service:
  pipelines:
    traces/guarded: {processors: []}
YAML
cat >"$work/disk_queue.yaml" <<'YAML'
connectors:
  spillover: {primary: traces/spill, spill: traces/upstream}
YAML
cat >"$work/zstd.yaml" <<'YAML'
exporters:
  otlp_grpc/direct: {compression: zstd}
YAML

start_gateway() { # variant [overlay variant]: starts it, sets gw to its pid
  local v=$1 store=$work/store-$1 more=()
  [[ -n ${2:-} ]] && more=(--config "file:$work/$2.yaml")
  rm -rf "$store"; mkdir -p "$store"
  if [[ $v == plain ]]; then
    "$bin" --config "file:$work/plain.yaml" >"$work/gw-$v.log" 2>&1 &
  else
    OTELCOL_LLM_UPSTREAM_ENDPOINT=127.0.0.1:$p_backend OTELCOL_LLM_STORAGE_DIR=$store \
      OTELCOL_LLM_OTLP_GRPC_PORT=$p_gw_grpc OTELCOL_LLM_OTLP_HTTP_PORT=$p_gw_http \
      OTELCOL_LLM_METRICS_PORT=$p_gw_metrics OTELCOL_LLM_HEALTH_PORT=$p_gw_health \
      OTELCOL_LLM_PROM_PORT=$p_gw_prom \
      "$bin" --config builtin:gateway --config "file:$work/$v.yaml" "${more[@]}" ${GATEWAY_FLAGS:-} >"$work/gw-$v.log" 2>&1 &
  fi
  gw=$!; pids+=("$gw")
}
stop() { # pids...: SIGTERM, then wait until each has exited
  kill "$@" 2>/dev/null || true
  for p in "$@"; do
    for _ in $(seq 300); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  done
}

# measure variant: sets result to "gateway_cpu_s gateway_spans backend_spans wall_s peak_rss_mib"
measure() {
  local v=$1 gen
  start_gateway "$v"
  wait_up "$p_gw_metrics"
  "$bin" --config "file:$work/generator.yaml" >"$work/gen-$v.log" 2>&1 &
  gen=$!; pids+=("$gen")
  wait_up "$p_gen_metrics"
  sleep 5 # warm-up: connections, batches and queues in steady state
  local c0 g0 b0 t0 c1 g1 b1 t1
  c0=$(cpu_ticks "$gw"); g0=$(metric_sum "$p_gw_metrics" otelcol_receiver_accepted_spans)
  b0=$(metric_sum "$p_backend_metrics" otelcol_receiver_accepted_spans); t0=$(date +%s.%N)
  sleep "$secs"
  c1=$(cpu_ticks "$gw"); g1=$(metric_sum "$p_gw_metrics" otelcol_receiver_accepted_spans)
  b1=$(metric_sum "$p_backend_metrics" otelcol_receiver_accepted_spans); t1=$(date +%s.%N)
  local rss; rss=$(peak_rss_mib "$gw")
  stop "$gen" "$gw"
  result=$(awk -v c=$((c1 - c0)) -v k="$tck" -v g=$((g1 - g0)) -v b=$((b1 - b0)) -v w="$(echo "$t1 - $t0" | bc)" -v r="$rss" \
    'BEGIN {printf "%.3f %d %d %.3f %s\n", c/k, g, b, w, r}')
}

profile() { # variant
  local v=$1 dir=${PROFILE_DIR:-$root/gateway-prof} gen
  mkdir -p "$dir"
  if [[ $v == plain ]]; then
    sed 's/^service:$/extensions: {pprof: {endpoint: 127.0.0.1:'"$p_pprof"'}}\nservice:\n  extensions: [pprof]/' "$work/plain.yaml" >"$work/profiled-plain.yaml"
    "$bin" --config "file:$work/profiled-plain.yaml" >"$work/gw-profiled-plain.log" 2>&1 &
    gw=$!; pids+=("$gw")
  else
    cat >"$work/profiled.yaml" <<YAML
extensions:
  pprof: {endpoint: 127.0.0.1:$p_pprof}
service:
  extensions: [health_check, file_storage, pprof]
YAML
    start_gateway profiled "$v"
  fi
  wait_up "$p_gw_metrics"
  "$bin" --config "file:$work/generator.yaml" >"$work/gen-prof.log" 2>&1 &
  gen=$!; pids+=("$gen")
  sleep 5
  curl -s -o "$dir/$v-cpu.pprof" "http://127.0.0.1:$p_pprof/debug/pprof/profile?seconds=20"
  curl -s -o "$dir/$v-heap.pprof" "http://127.0.0.1:$p_pprof/debug/pprof/heap"
  stop "$gen" "$gw"
  echo "profiles of $v: $dir/$v-cpu.pprof $dir/$v-heap.pprof (go tool pprof -top $bin $dir/$v-cpu.pprof)"
}

"$bin" --config "file:$work/backend.yaml" >"$work/backend.log" 2>&1 &
pids+=("$!")
wait_up "$p_backend_metrics"

echo "gateway compare: $(date -u +%FT%TZ) on $(nproc) CPUs (load average $(cut -d' ' -f1-3 /proc/loadavg)), ${rate:-as fast as possible} ${rate:+requests/s}, ${secs}s windows, $rounds round(s), $bin"
declare -A cpu spans back rss
for round in $(seq "$rounds"); do
  for v in $variants; do
    measure "$v"
    read -r c g b w r <<<"$result"
    cpu[$v]="${cpu[$v]:-} $c" spans[$v]="${spans[$v]:-} $g" back[$v]="${back[$v]:-} $b" rss[$v]="${rss[$v]:-} $r"
    awk -v n="$v" -v c="$c" -v g="$g" -v b="$b" -v w="$w" -v r="$r" -v round="$round" 'BEGIN {
      printf "  round %d %-13s %9d spans in (%7.0f/s) %9d at backend %7.2f CPU-s %6.2f us/span %9.0f spans/CPU-s  peak RSS %4d MiB\n",
        round, n, g, g/w, b, c, (g > 0 ? c*1e6/g : 0), (c > 0 ? g/c : 0), r }'
  done
done

# Summary: per variant, the median over rounds of us/span and of its ratio
# to the plain collector's in the same round (rounds drift on a shared
# machine; a ratio within one round does not).
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
per_span() { # variant: us/span of each round
  local -a cs gs; local out="" i
  read -ra cs <<<"${cpu[$1]}"; read -ra gs <<<"${spans[$1]}"
  for i in "${!cs[@]}"; do out="$out $(awk -v c="${cs[$i]}" -v g="${gs[$i]}" 'BEGIN {printf "%.3f", (g > 0 ? c*1e6/g : 0)}')"; done
  echo "$out"
}
declare -A us
echo
printf '| gateway | spans per CPU-second | µs per span | peak RSS MiB | vs plain (per round) |\n|---|---:|---:|---:|---:|\n'
plain_rounds=""
[[ -n ${cpu[plain]:-} ]] && plain_rounds=$(per_span plain)
for v in $variants; do
  rounds_us=$(per_span "$v")
  us[$v]=$(echo "$rounds_us" | median)
  peak=$(echo "${rss[$v]}" | tr ' ' '\n' | sort -g | tail -1)
  ratio=n/a
  if [[ -n $plain_rounds ]]; then
    ratio=$(paste -d' ' <(echo "$rounds_us" | tr ' ' '\n' | grep -v '^$') <(echo "$plain_rounds" | tr ' ' '\n' | grep -v '^$') |
      awk '{printf "%s ", ($2 > 0 ? $1/$2 : 0)}' | median)
    ratio=$(awk -v r="$ratio" 'BEGIN {printf "%.2fx", r}')
  fi
  awk -v n="$v" -v u="${us[$v]}" -v r="$peak" -v x="$ratio" 'BEGIN {printf "| %s | %.0f | %.2f | %d | %s |\n", n, (u > 0 ? 1e6/u : 0), u, r, x}'
done
if [[ -n ${us[shipped]:-} && " $variants" == *" -"* ]]; then
  echo
  echo "marginal cost in the shipped gateway (median shipped - median of the variant without it), µs per span:"
  for v in $variants; do
    [[ $v == -* ]] || continue
    awk -v n="${v#-}" -v s="${us[shipped]}" -v u="${us[$v]}" 'BEGIN {printf "  %-12s %6.2f\n", n, s-u}'
  done
fi
if [[ -n ${PROFILE:-} ]]; then
  [[ $PROFILE == 1 ]] && PROFILE=shipped
  for v in $PROFILE; do profile "$v"; done
fi
exit 0
