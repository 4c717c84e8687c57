#!/usr/bin/env bash
# together.sh NAME TARGET...: runs the make TARGETs at once, each as its own
# phase (scripts/phase.sh), and the whole as phase NAME. Each target's
# output is held and printed as one block when it ends, so blocks never
# interleave. Exits non-zero when any target failed, after all have ended.
#
# make test runs its static checks and script tests this way: most of them
# leave a core idle for most of their run (govulncheck, the Python tests,
# vet and lint with a warm cache), so side by side they end before their
# sum (docs/testing.md).
set -uo pipefail
name=${1:?usage: together.sh NAME TARGET...}
shift
cd "$(dirname "$0")/.."
make=${MAKE:-make}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rerankd-together.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s.%N)
declare -A pid=()
for t in "$@"; do
  scripts/phase.sh "$t" "$make" --no-print-directory "$t" >"$tmp/$t.out" 2>&1 &
  pid[$t]=$!
done
rc=0
failed=()
for t in "$@"; do
  if ! wait "${pid[$t]}"; then rc=1; failed+=("$t"); fi
  cat "$tmp/$t.out"
done
secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
if [ "$rc" -eq 0 ]; then
  line="phase $name: ok in $secs s"
else
  line="phase $name: FAILED (${failed[*]}) after $secs s"
fi
echo "$line" >&2
if [ -n "${RERANKD_PHASE_LOG:-}" ]; then echo "$line" >>"$RERANKD_PHASE_LOG"; fi
exit "$rc"
