#!/usr/bin/env bash
# phase.sh NAME CMD [ARGS...]: runs CMD and reports its wall time as
#   phase NAME: ok in 12.3 s        (or: FAILED (exit N) after 12.3 s)
# on stderr, and appends the same line to $RERANKD_PHASE_LOG when set
# (scripts/fresh_check.sh collects them). Exits with CMD's status.
set -uo pipefail
name=${1:?usage: phase.sh NAME CMD [ARGS...]}
shift
start=$(date +%s.%N)
"$@"
rc=$?
secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
if [ "$rc" -eq 0 ]; then
  line="phase $name: ok in $secs s"
else
  line="phase $name: FAILED (exit $rc) after $secs s"
fi
echo "$line" >&2
if [ -n "${RERANKD_PHASE_LOG:-}" ]; then echo "$line" >>"$RERANKD_PHASE_LOG"; fi
exit "$rc"
