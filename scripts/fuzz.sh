#!/usr/bin/env bash
# Runs every fuzz target of the root module, one after the other, for the
# given time each (go test -fuzz takes one target per run).
#
#   scripts/fuzz.sh [fuzztime] [name-regexp]
#
# fuzztime is a go test -fuzztime value: a duration (default 10s; `make fuzz`
# uses 5m) or an execution count such as 5000x (`make test`). A failing input
# is minimized (at most 30s) and saved by go test under the package's
# testdata/fuzz/<Target>/, where it becomes a regression case that every
# later `go test` runs; commit it with the fix.
#
# Go's fuzz coordinator (go1.26) can report "context deadline exceeded" when
# a duration -fuzztime expires while a worker is mid-call, although no input
# failed (go.dev/issue/75804). A run that fails that way and writes no new
# input under testdata/fuzz/ is run again, at most twice; counts (Nx) set no
# deadline and never hit it.
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
# corpus_files lists the saved inputs of a target (empty when none).
corpus_files() { find "$1/testdata/fuzz/$2" -type f 2>/dev/null | sort || true; }

for t in "${targets[@]}"; do
  dir=${t% *} name=${t#* }
  start=$(date +%s)
  for attempt in 1 2 3; do
    before=$(corpus_files "$dir" "$name")
    if out=$($GO test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime 30s "./$dir" 2>&1); then
      ok=1
      break
    fi
    ok=0
    # Only the coordinator's deadline race, with no new failing input, is retried.
    if [[ "$(corpus_files "$dir" "$name")" == "$before" ]] &&
      grep -q -- '--- FAIL: '"$name"' ' <<<"$out" &&
      [[ "$(grep -A1 -- '--- FAIL: '"$name"' ' <<<"$out" | tail -n 1 | tr -d ' \t')" == "contextdeadlineexceeded" ]] &&
      [[ $attempt -lt 3 ]]; then
      echo "retry $dir.$name: fuzz coordinator deadline race (go.dev/issue/75804), no failing input written"
      continue
    fi
    break
  done
  if [[ $ok -eq 1 ]]; then
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
