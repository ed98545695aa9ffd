#!/usr/bin/env bash
# Side-by-side throughput of telemetrygen and llm_loadgen, in one run, on this
# machine, both into the built collector and a (sampled) debug exporter, the
# closest thing to a no-op exporter in this distribution:
#
#   A: telemetrygen (pinned go install of contrib's cmd/telemetrygen) at full
#      speed -> OTLP (gRPC or HTTP) -> otlp receiver -> batch -> debug
#   B: llm_loadgen (synthetic, as_fast_as_possible, chat) -> batch -> debug
#
# Spans are counted where they are delivered (the increase of the collector's
# otelcol_exporter_sent_spans over the measured window), never by the
# generator's own claim: telemetrygen's SDK drops spans when its export queue
# is full, and those spans cost CPU but are not credited. CPU is the
# user+system time of every process involved (telemetrygen and the collector
# for A, the collector for B) over the same window.
#
# telemetrygen runs unthrottled (--rate 0): with a rate, each worker waits on a
# limiter with a burst of one per span, and on a busy machine the sleeps, not
# the CPU, set the pace (about 700 traces/s at --rate 20000 here). Unthrottled,
# its workers outrun the SDK's single export goroutine, so the queue and batch
# sizes decide how much of what it generates is delivered. The script runs
# each configuration in TELEMETRYGEN_CONFIGS and computes the ratio against
# the best of them (the one with the most delivered spans per CPU-second), so
# telemetrygen is compared at its best, not at its defaults.
#
# Usage: compare-telemetrygen.sh [seconds] [runs]   (from the repository root)
# Env:   OTELCOL_LLM_BINARY (default cmd/otelcol-llm/otelcol-llm),
#        TELEMETRYGEN_VERSION (default v0.161.0, see below),
#        TELEMETRYGEN_CONFIGS: ';'-separated "flags|ENV=value ..." entries
#          (default: the naive full-speed run with $(nproc) workers and the
#          default batch of 100, and tuned runs with one worker, batches of
#          8192 and a 65536-span queue, over gRPC and over HTTP; flags with
#          --otlp-http go to the receiver's HTTP endpoint).
set -euo pipefail

secs=${1:-15}
runs=${2:-1}
root=$(cd "$(dirname "$0")/../../.." && pwd)
bin=${OTELCOL_LLM_BINARY:-$root/cmd/otelcol-llm/otelcol-llm}
# Pinned at v0.161.0, not at the project's contrib release v0.165.1: the Go
# module proxy refuses cmd/telemetrygen v0.165.1 and v0.165.0 ("403 Forbidden:
# This module version is not available") and v0.161.0 is the newest version it
# serves. telemetrygen is a standalone OTLP client, so its release does not
# change what is measured on the collector side.
version=${TELEMETRYGEN_VERSION:-v0.161.0}
tools=$root/.tools/telemetrygen-$version
tg=$tools/telemetrygen
ncpu=$(nproc)
configs=${TELEMETRYGEN_CONFIGS:-"--workers $ncpu --rate 0 --child-spans 1|;--workers 1 --rate 0 --child-spans 1 --batch-size 8192|OTEL_BSP_MAX_QUEUE_SIZE=65536;--otlp-http --workers 1 --rate 0 --child-spans 1 --batch-size 8192|OTEL_BSP_MAX_QUEUE_SIZE=65536"}

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

wait_metrics() { # port: wait up to 10 s for the collector's metrics endpoint
  for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$1/metrics" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "collector metrics endpoint on port $1 did not come up" >&2
  return 1
}

# measure name config_file metrics_port [generator_command [env]]
# prints "spans collector_cpu_s generator_cpu_s wall_s"
#
# Without a generator command the collector generates by itself (llm_loadgen):
# the window is $secs seconds after a 2 s warm-up. With one, the window runs
# from the generator's start until it has exited (it stops after --duration
# and flushes its queue) plus one second for the collector's batch timeout.
measure() {
  local name=$1 cfg=$2 mport=$3 gen_cmd=${4:-} gen_env=${5:-}
  "$bin" --config "file:$cfg" >"$work/$name.log" 2>&1 &
  local pid=$!
  wait_metrics "$mport"
  sleep 2
  local s0 c0 t0 s1 c1 t1 gcpu=0
  s0=$(sent_spans "$mport"); c0=$(cpu_of $pid); t0=$(date +%s.%N)
  if [[ -n $gen_cmd ]]; then
    # The wrapper shell waits for the generator, then reads its own children's
    # CPU time (cutime + cstime), which now holds the generator's.
    # shellcheck disable=SC2086
    env $gen_env bash -c "$gen_cmd >'$work/$name.gen.log' 2>&1; awk '{print \$16+\$17}' /proc/\$\$/stat" >"$work/$name.gencpu"
    t1=$(date +%s.%N)
    sleep 1
    gcpu=$(cat "$work/$name.gencpu")
  else
    sleep "$secs"
    t1=$(date +%s.%N)
  fi
  s1=$(sent_spans "$mport"); c1=$(cpu_of $pid)
  kill "$pid"; wait "$pid" 2>/dev/null || true
  awk -v s=$((s1 - s0)) -v c=$((c1 - c0)) -v g="$gcpu" -v k="$tck" -v w="$(echo "$t1 - $t0" | bc)" \
    'BEGIN {printf "%d %.3f %.3f %.3f\n", s, c/k, g/k, w}'
}

report() { # name spans collector_cpu generator_cpu wall
  awk -v n="$1" -v s="$2" -v c="$3" -v g="$4" -v w="$5" 'BEGIN {
    t = c + g
    printf "  %-44s %10d spans %9.0f spans/s %7.2f CPU-s/M spans %9.0f spans/CPU-s  (collector %.2f s", n, s, s/w, (s>0 ? t*1e6/s : 0), (t>0 ? s/t : 0), c
    if (g > 0) printf ", telemetrygen %.2f s = %.2f cores", g, g/w
    printf ")\n" }'
}

echo "compare-telemetrygen: $(date -u +%FT%TZ) on $ncpu CPUs (load average $(cut -d' ' -f1-3 /proc/loadavg)), ${secs}s per side, $runs run(s), collector $bin"

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

# A: the otlp receiver, fed by telemetrygen.
pa=$(free_port); og=$(free_port); oh=$(free_port)
{ cat <<YAML
receivers:
  otlp:
    protocols:
      grpc: {endpoint: 127.0.0.1:$og}
      http: {endpoint: 127.0.0.1:$oh}
YAML
  common_service "$pa"
  cat <<YAML
  pipelines:
    traces: {receivers: [otlp], processors: [batch], exporters: [debug]}
YAML
} >"$work/a.yaml"

ratios=()
for run in $(seq "$runs"); do
  echo "run $run:"
  read -r bs bc _ bw < <(measure llm_loadgen "$work/b.yaml" "$pb")
  report "llm_loadgen (chat)" "$bs" "$bc" 0 "$bw"
  [[ -n $tg ]] || continue
  best=0
  IFS=';' read -ra cfgs <<<"$configs"
  for i in "${!cfgs[@]}"; do
    flags=${cfgs[$i]%%|*}
    envs=""
    [[ ${cfgs[$i]} == *"|"* ]] && envs=${cfgs[$i]#*|}
    endpoint=127.0.0.1:$og
    [[ $flags == *--otlp-http* ]] && endpoint=127.0.0.1:$oh
    read -r as ac ag aw < <(measure "telemetrygen$i" "$work/a.yaml" "$pa" \
      "$tg traces --otlp-insecure --otlp-endpoint $endpoint --duration ${secs}s $flags" "$envs")
    report "telemetrygen $version [$i]" "$as" "$ac" "$ag" "$aw"
    echo "      flags: $flags${envs:+  env: $envs}"
    best=$(awk -v b="$best" -v s="$as" -v t="$(echo "$ac + $ag" | bc)" 'BEGIN {v = (t > 0 ? s/t : 0); print (v > b ? v : b)}')
  done
  r=$(awk -v bs="$bs" -v bc="$bc" -v best="$best" 'BEGIN {if (bc > 0 && best > 0) printf "%.2f", (bs/bc)/best; else print "n/a"}')
  ratios+=("$r")
  echo "  ratio (llm_loadgen / best telemetrygen, spans per CPU-second): ${r}x"
done
if ((${#ratios[@]} > 0)); then
  echo "ratios: ${ratios[*]}  (median $(printf '%s\n' "${ratios[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')x)"
fi
