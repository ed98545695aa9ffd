#!/usr/bin/env bash
# Side-by-side benchmark of llm_semconv (root module) and the OTTL anchor
# (contrib transformprocessor v0.161.0, this module) on the same OTLP inputs
# (processors/llmsemconvprocessor/testdata/bench/*.json). The two run in
# alternating rounds so that both see the same machine load; the median
# ns/span of each input is reported with the ratio and CPU-seconds per
# million spans (one core: ns/span * 1e6 / 1e9). A last row puts the OTTL
# figure next to the pdata floor of the typical OpenInference span: what any
# implementation on pdata's public API spends to produce llm_semconv's output
# once every decision is made.
#
# Usage: bench/ottl/compare.sh [rounds] [benchtime]   (defaults: 5, 2000x)
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)
rounds=${1:-5}
benchtime=${2:-2000x}
inputs='openinference_typical|openinference_chat|openllmetry_chat|vercel_ai|unchanged_official'
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

(cd "$root" && go test -c -o "$out/semconv.test" ./processors/llmsemconvprocessor/)
go test -c -o "$out/ottl.test" .

for r in $(seq 1 "$rounds"); do
  (cd "$root/processors/llmsemconvprocessor" && "$out/semconv.test" -test.run '^$' -test.bench "BenchmarkNormalize/($inputs)\$|BenchmarkTypicalPdataFloor\$" -test.benchtime "$benchtime" -test.benchmem) \
    > "$out/round.txt"
  awk '/^BenchmarkNormalize\//' "$out/round.txt" >> "$out/semconv.txt"
  # The floor: the same output as llm_semconv for openinference_typical with
  # every decision made in advance (pdata work only).
  awk '/^BenchmarkTypicalPdataFloor/ { sub(/^BenchmarkTypicalPdataFloor(-[0-9]+)?/, "BenchmarkNormalize/openinference_typical"); print }' "$out/round.txt" >> "$out/floor.txt"
  "$out/ottl.test" -test.run '^$' -test.bench "BenchmarkOTTL/($inputs)\$" -test.benchtime "$benchtime" -test.benchmem \
    | awk '/^BenchmarkOTTL\//' >> "$out/ottl.txt"
done

# median of the ns/span column per input
median() {
  awk -v name="$2" '{ split($1, p, "/"); sub(/-[0-9]+$/, "", p[2]); if (p[2] == name) for (i = 2; i <= NF; i++) if ($(i+1) == "ns/span") print $i }' "$1" |
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2] + v[NR/2+1]) / 2 }'
}
allocs() {
  awk -v name="$2" '{ split($1, p, "/"); sub(/-[0-9]+$/, "", p[2]); if (p[2] == name) for (i = 2; i <= NF; i++) if ($(i+1) == "allocs/op") print $i / 100 }' "$1" | sort -g | head -1
}

date -u +"%Y-%m-%d %H:%M UTC, $rounds alternating rounds, benchtime $benchtime, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| input | llm_semconv ns/span | allocs/span | OTTL ns/span | allocs/span | llm_semconv CPU-s per 1M spans | OTTL CPU-s per 1M spans | OTTL / llm_semconv |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|\n'
for name in ${inputs//|/ }; do
  s=$(median "$out/semconv.txt" "$name")
  o=$(median "$out/ottl.txt" "$name")
  sa=$(allocs "$out/semconv.txt" "$name")
  oa=$(allocs "$out/ottl.txt" "$name")
  awk -v n="$name" -v s="$s" -v o="$o" -v sa="$sa" -v oa="$oa" 'BEGIN { printf "| %s | %.0f | %.1f | %.0f | %.1f | %.2f | %.2f | %.1fx |\n", n, s, sa, o, oa, s / 1000, o / 1000, o / s }'
done
f=$(median "$out/floor.txt" openinference_typical)
fa=$(allocs "$out/floor.txt" openinference_typical)
o=$(median "$out/ottl.txt" openinference_typical)
awk -v f="$f" -v fa="$fa" -v o="$o" 'BEGIN { printf "| openinference_typical, pdata floor (BenchmarkTypicalPdataFloor: same output, every decision made in advance) | %.0f | %.1f | %.0f | | %.2f | %.2f | %.1fx |\n", f, fa, o, f / 1000, o / 1000, o / f }'
