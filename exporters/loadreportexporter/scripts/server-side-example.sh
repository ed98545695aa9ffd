#!/usr/bin/env bash
# The README's "Where did the time go?" example: builtin:loadtest-live against
# mockllm's vLLM simulator above its KV capacity (its request spans to the
# collector, its /metrics scraped), then the report's server-side sections
# as headless Chromium renders them.
#
#   make build mockllm
#   exporters/loadreportexporter/scripts/server-side-example.sh [out-dir]
#
# Writes out-dir/report/ (the whole report) and out-dir/where-did-the-time-go.png
# and out-dir/server-during-the-run.png. Ports 18000 and 14317/14318/14133/14888 on
# 127.0.0.1 must be free.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
out=${1:-/tmp/otelcol-llm-server-side}
chromium=$(command -v chromium || command -v chromium-browser) || { echo "chromium is needed (apt-get install -y chromium)" >&2; exit 2; }
mkdir -p "$out"
rm -rf "$out/report"

"$root/bin/mockllm" -addr 127.0.0.1:18000 -ttft 40ms -itl 4ms -prefill-per-token 20us \
  -output-tokens 200 -output-jitter 0.2 -max-running 256 -kv-cache-tokens 16384 -seed 11 \
  -otlp-endpoint 127.0.0.1:14317 >"$out/mockllm.log" 2>&1 &
mock=$!
trap 'kill $mock 2>/dev/null || true' EXIT

OTELCOL_LLM_TARGET_URL=http://127.0.0.1:18000/v1 OTELCOL_LLM_TARGET_METRICS=127.0.0.1:18000 \
OTELCOL_LLM_TARGET_SCRAPE_INTERVAL=1s OTELCOL_LLM_LOADGEN_REQUESTS=600 OTELCOL_LLM_LOADGEN_RATE=40 \
OTELCOL_LLM_REPORT_DIR="$out/report" OTELCOL_LLM_REPORT_EXIT_ON=none \
OTELCOL_LLM_OTLP_GRPC_PORT=14317 OTELCOL_LLM_OTLP_HTTP_PORT=14318 OTELCOL_LLM_HEALTH_PORT=14133 \
OTELCOL_LLM_METRICS_PORT=14888 \
  timeout 300 "$root/cmd/otelcol-llm/otelcol-llm" --config builtin:loadtest-live >"$out/collector.log" 2>&1

# One page per section: the report's style and the section from its heading
# to the next heading, so each screenshot holds just that section.
shot() { # section-id next-heading-marker png width height
  python3 - "$out/report/report.html" "$1" "$2" "$out/$1.html" <<'PY'
import re, sys
page, sid, until, dst = sys.argv[1:5]
html = open(page, encoding="utf-8").read()
style = re.search(r"<style>.*?</style>", html, re.S).group(0)
start = html.index('<h2 id="%s"' % sid)
end = html.index(until, start + 1)
open(dst, "w", encoding="utf-8").write("<!DOCTYPE html><html><head><meta charset=utf-8>%s</head><body>%s</body></html>" % (style, html[start:end]))
PY
  "$chromium" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
    --user-data-dir="$out/chromium" --screenshot="$out/$3" --window-size="$4,$5" "file://$out/$1.html" 2>/dev/null
  echo "wrote $out/$3"
}
shot where-did-the-time-go "<h2" where-did-the-time-go.png 1200 1180
shot server-metrics '<h2' server-during-the-run.png 1200 900
