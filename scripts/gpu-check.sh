#!/usr/bin/env bash
# Real-hardware check of the nvidia_gpu receiver (make gpu-check). Needs an
# NVIDIA GPU, its driver and nvidia-smi; it is not part of `make test`.
#
# 1. builds the collector (make build),
# 2. runs nvidia_gpu for GPU_CHECK_SECONDS (default 30) into a Prometheus
#    endpoint on loopback, with the opt-in metrics on,
# 3. asserts, per GPU: a non-zero memory limit equal to nvidia-smi's
#    memory.total (within 2 %), utilization in [0, 1], power > 0 and close to
#    nvidia-smi's power.draw (within max(30 W, 25 %)),
# 4. reports the mean scrape duration per GPU from the receiver's own
#    otelcol_nvidia_gpu_scrape_duration histogram.
# Exit status: 0 all checks passed, 1 a check failed, 2 no GPU / setup error.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_TO_RUN=${GPU_CHECK_SECONDS:-30}
PROM_PORT=${GPU_CHECK_PROM_PORT:-19464}
SELF_PORT=${GPU_CHECK_SELF_PORT:-19465}
BIN=${OTELCOL_LLM_BINARY:-cmd/otelcol-llm/otelcol-llm}
OUT=${GPU_CHECK_OUT:-$(mktemp -d /tmp/gpu-check.XXXXXX)}
mkdir -p "$OUT"

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >"$OUT/gpus.txt" 2>&1; then
  echo "gpu-check: nvidia-smi is missing or sees no GPU; this check needs a GPU machine" >&2
  exit 2
fi
echo "== GPUs"; cat "$OUT/gpus.txt"

if [ -z "${OTELCOL_LLM_BINARY:-}" ]; then
  echo "== make build"; make build
fi

cat >"$OUT/config.yaml" <<YAML
receivers:
  nvidia_gpu:
    collection_interval: 2s
    initial_delay: 0s
    on_missing: fail
    metrics:
      nvidia.gpu.process.utilization: {enabled: true}
      nvidia.gpu.pcie.throughput: {enabled: true}
exporters:
  prometheus:
    endpoint: 127.0.0.1:${PROM_PORT}
    resource_to_telemetry_conversion:
      enabled: true
  debug:
    verbosity: basic
service:
  telemetry:
    metrics:
      level: detailed
      readers:
        - pull:
            exporter:
              prometheus: {host: 127.0.0.1, port: ${SELF_PORT}}
  pipelines:
    metrics: {receivers: [nvidia_gpu], exporters: [prometheus]}
    logs: {receivers: [nvidia_gpu], exporters: [debug]}
YAML

echo "== running nvidia_gpu for ${SECONDS_TO_RUN}s (output in $OUT)"
"$BIN" --config "file:$OUT/config.yaml" >"$OUT/collector.log" 2>&1 &
PID=$!
cleanup() { kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; }
trap cleanup EXIT
sleep "$SECONDS_TO_RUN"
if ! kill -0 "$PID" 2>/dev/null; then
  echo "gpu-check: FAIL: the collector exited early" >&2
  tail -n 40 "$OUT/collector.log" >&2
  exit 1
fi
curl -fsS "http://127.0.0.1:${PROM_PORT}/metrics" >"$OUT/metrics.prom"
curl -fsS "http://127.0.0.1:${SELF_PORT}/metrics" >"$OUT/self.prom"
nvidia-smi --query-gpu=uuid,memory.total,power.draw,utilization.gpu --format=csv,noheader,nounits >"$OUT/smi.csv"
cleanup
trap - EXIT

# value FILE METRIC-REGEX UUID [EXTRA-LABEL-REGEX]: first sample of the metric
# (any of the exporter's name forms) whose labels carry hw_id="UUID".
value() {
  awk -v m="$2" -v id="hw_id=\"$3\"" -v extra="${4:-}" '
    $0 !~ /^#/ && match($0, "^(" m ")\\{") && index($0, id) && (extra == "" || $0 ~ extra) {
      print $NF; exit
    }' "$1"
}

fail=0
printf '\n%-42s %10s %10s %8s %8s %8s %8s %10s\n' "GPU" "mem MiB" "smi MiB" "util" "W" "smi W" "W max" "scrape ms"
while IFS=',' read -r uuid smi_mem smi_power smi_util; do
  uuid=$(echo "$uuid" | xargs); smi_mem=$(echo "$smi_mem" | xargs); smi_power=$(echo "$smi_power" | xargs)
  limit=$(value "$OUT/metrics.prom" 'hw_gpu_memory_limit(_bytes)?' "$uuid")
  util=$(value "$OUT/metrics.prom" 'hw_gpu_utilization(_ratio)?' "$uuid" 'hw_gpu_task="general"')
  power=$(value "$OUT/metrics.prom" 'hw_power(_watts)?' "$uuid")
  pmax=$(value "$OUT/metrics.prom" 'nvidia_gpu_power_max(_watts)?' "$uuid")
  dsum=$(value "$OUT/self.prom" 'otelcol_nvidia_gpu_scrape_duration(_seconds)?_sum' "$uuid")
  dcnt=$(value "$OUT/self.prom" 'otelcol_nvidia_gpu_scrape_duration(_seconds)?_count' "$uuid")
  report=$(awk -v limit="${limit:-0}" -v smi_mem="$smi_mem" -v util="${util:--1}" -v power="${power:-0}" \
    -v smi_power="$smi_power" -v pmax="${pmax:-0}" -v dsum="${dsum:-0}" -v dcnt="${dcnt:-0}" -v uuid="$uuid" 'BEGIN {
      mib = limit / 1048576; bad = ""
      if (limit <= 0) bad = bad " memory-limit-missing"
      else if (mib < smi_mem * 0.98 || mib > smi_mem * 1.02) bad = bad " memory-limit-differs-from-nvidia-smi"
      if (util < 0 || util > 1) bad = bad " utilization-out-of-range"
      if (power <= 0 || power > 1500) bad = bad " power-implausible"
      else if (smi_power ~ /^[0-9.]+$/) {
        tol = smi_power * 0.25; if (tol < 30) tol = 30
        d = power - smi_power; if (d < 0) d = -d
        if (d > tol) bad = bad " power-differs-from-nvidia-smi"
      }
      ms = (dcnt > 0) ? dsum / dcnt * 1000 : -1
      printf "%-42s %10.0f %10s %8.3f %8.1f %8s %8.1f %10.2f%s\n", uuid, mib, smi_mem, util, power, smi_power, pmax, ms, (bad == "" ? "" : "  FAIL:" bad)
    }')
  echo "$report"
  case "$report" in *FAIL:*) fail=1 ;; esac
done <"$OUT/smi.csv"

echo
echo "processes reported: $(grep -c '^nvidia_gpu_process_memory_usage' "$OUT/metrics.prom" || true)"
echo "unsupported calls:  $(grep -E '^otelcol_nvidia_gpu_nvml_calls_unsupported' "$OUT/self.prom" | sed -E 's/.*call="([^"]*)".*/\1/' | sort -u | tr '\n' ' ')"
echo "failed calls:       $(grep -E '^otelcol_nvidia_gpu_nvml_calls_failed' "$OUT/self.prom" | wc -l | xargs) series"
if grep -q 'panic' "$OUT/collector.log"; then echo "gpu-check: FAIL: panic in collector log" >&2; fail=1; fi
if [ "$fail" -ne 0 ]; then echo "gpu-check: FAIL (files in $OUT)"; exit 1; fi
echo "gpu-check: PASS (files in $OUT)"
