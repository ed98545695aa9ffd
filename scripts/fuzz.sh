#!/usr/bin/env bash
# Runs every fuzz target of the root module, one after the other, for the
# given time each (go test -fuzz takes one target per run).
#
#   scripts/fuzz.sh [fuzztime] [name-regexp]
#
# fuzztime is a go test -fuzztime value (default 10s; `make test` uses 10s,
# `make fuzz` 5m). A failing input is minimized (at most 30s) and saved by
# go test under the package's testdata/fuzz/<Target>/, where it becomes a
# regression case that every later `go test` runs; commit it with the fix.
set -euo pipefail

fuzztime=${1:-10s}
filter=${2:-.}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
GO=${GO:-go}

# Targets as "package-dir target", from the test sources of the root module
# (nested modules such as bench/ and deploy/helm/test are not part of it).
mapfile -t targets < <(
  git ls-files --cached --others --exclude-standard -- '*_test.go' |
    grep -v -e '^bench/' -e '^deploy/' -e '^cmd/otelcol-llm/' |
    xargs grep -H -o -E '^func Fuzz[A-Za-z0-9_]+\(' |
    sed -E 's#^(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]+)\($#\1 \2#' |
    grep -E "$filter" | sort -u
)
if [[ ${#targets[@]} -eq 0 ]]; then
  echo "no fuzz target matches '$filter'" >&2
  exit 1
fi

echo "fuzzing ${#targets[@]} targets for $fuzztime each"
failed=()
for t in "${targets[@]}"; do
  dir=${t% *} name=${t#* }
  start=$(date +%s)
  if out=$($GO test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime 30s "./$dir" 2>&1); then
    execs=$(grep -o -E 'execs: [0-9]+' <<<"$out" | tail -n 1 || true)
    printf 'ok    %-60s %4ss  %s\n' "$dir.$name" "$(( $(date +%s) - start ))" "${execs:-}"
  else
    printf 'FAIL  %s.%s\n' "$dir" "$name"
    sed 's/^/      /' <<<"$out" | tail -n 40
    failed+=("$dir.$name")
  fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz targets failed: ${failed[*]}" >&2
  exit 1
fi
