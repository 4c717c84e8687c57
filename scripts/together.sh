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
cd "$(dirname "$0")/.."
if [ "${1:-}" != --inner ]; then
  exec scripts/phase.sh "${1:?usage: together.sh NAME TARGET...}" "$0" --inner "${@:2}"
fi
shift
make=${MAKE:-make}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rerankd-together.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
declare -A pid=()
for t in "$@"; do
  scripts/phase.sh "$t" "$make" --no-print-directory "$t" >"$tmp/$t.out" 2>&1 &
  pid[$t]=$!
done
rc=0
for t in "$@"; do
  wait "${pid[$t]}" || rc=1
  cat "$tmp/$t.out"
done
exit "$rc"
