#!/usr/bin/env bash
# fresh_check.sh: runs .ci/run as a new machine would, inside this one.
#
# It clones the committed HEAD (or --ref REV) into a temporary folder and runs
# .ci/run there with CI=true and every per-user location pointing into new
# empty folders: HOME, GOPATH, GOCACHE, GOMODCACHE, XDG_CACHE_HOME,
# XDG_DATA_HOME, XDG_CONFIG_HOME, RERANKD_CACHE, RERANKD_DATA and npm's
# cache. So the Go toolchain, the modules, golangci-lint, govulncheck, ONNX
# Runtime and the tokenizer are all fetched again, and any step that relies
# on a folder, a tool or a cache this machine happens to have fails here as
# it would on a new one. ../shared sits beside the clone, as in CI (a link
# to this checkout's ../shared, when it exists).
#
# Uncommitted changes are not checked: commit first.
#
# Usage: scripts/fresh_check.sh [--keep-caches] [--ref REV] [--keep]
#   --keep-caches  use this machine's Go module and build caches (`go env
#                  GOMODCACHE GOCACHE`, and so its downloaded toolchain) and
#                  golangci-lint's analysis cache ($GOLANGCI_LINT_CACHE, else
#                  ~/.cache/golangci-lint): the caches a CI runner keeps
#                  between runs (golangci-lint-action restores the last),
#                  all keyed by content (make test's -trimpath keeps the
#                  clone's folder out of the keys). A quicker second opinion;
#                  everything else, golangci-lint's binary included, is
#                  still new.
#   --ref REV      check REV instead of HEAD (e.g. to time an older commit).
#   --keep         leave the temporary folder for inspection.
# Prints each phase's wall time (clone, each `make test` phase, cleanup), and
# last a line "fresh-check: PASS|FAIL ..." with the total; exits with
# .ci/run's status (2 for a usage error).
set -euo pipefail
# The whole script is one compound command, which bash reads completely
# before running: editing this file while a check runs cannot derail it.
{
keep_caches=0 keep=0 ref=HEAD
while [ $# -gt 0 ]; do
  case "$1" in
    --keep-caches) keep_caches=1; shift ;;
    --keep) keep=1; shift ;;
    --ref) ref="${2:?--ref needs a revision}"; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "fresh-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

repo=$(cd "$(dirname "$0")/.." && pwd)
if [ "$keep_caches" = 1 ]; then
  # Asked before HOME changes; outside the module, so no toolchain switch.
  kept_mod=$(cd / && GOTOOLCHAIN=local go env GOMODCACHE)
  kept_build=$(cd / && GOTOOLCHAIN=local go env GOCACHE)
  kept_lint=${GOLANGCI_LINT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/golangci-lint}
fi
rev=$(git -C "$repo" rev-parse --verify "$ref^{commit}") || { echo "fresh-check: no such revision $ref" >&2; exit 2; }
if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ] && [ "$ref" = HEAD ]; then
  echo "fresh-check: note: uncommitted changes in $repo are not part of this check" >&2
fi

now() { date +%s.%N; }
elapsed() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }'; }

t0=$(now)
root=$(mktemp -d "${TMPDIR:-/tmp}/rerankd-fresh.XXXXXX")
cleaned=0
cleanup() {
  [ "$cleaned" = 0 ] || return 0
  cleaned=1
  local c; c=$(now)
  if [ "$keep" = 1 ]; then
    echo "fresh-check: kept $root" >&2
    return
  fi
  # The module cache is read-only by design; make it removable first.
  chmod -R u+w "$root" 2>/dev/null || true
  rm -rf "$root"
  echo "phase cleanup: ok in $(elapsed "$c") s" >&2
}
trap cleanup EXIT

home="$root/home"
mkdir -p "$home"
export HOME="$home"
export GOPATH="$home/go"
export XDG_CACHE_HOME="$home/.cache" XDG_DATA_HOME="$home/.local/share" XDG_CONFIG_HOME="$home/.config"
export RERANKD_CACHE="$XDG_CACHE_HOME/rerankd" RERANKD_DATA="$XDG_DATA_HOME/rerankd"
export npm_config_cache="$home/.npm"
if [ "$keep_caches" = 1 ]; then
  export GOMODCACHE="$kept_mod" GOCACHE="$kept_build" GOLANGCI_LINT_CACHE="$kept_lint"
  caches="this machine's Go module, build and lint caches kept ($kept_mod, $kept_build, $kept_lint)"
else
  export GOMODCACHE="$GOPATH/pkg/mod" GOCACHE="$XDG_CACHE_HOME/go-build"
  unset GOLANGCI_LINT_CACHE
  caches="all caches new"
fi
export CI=true
# Paths this machine's own setup may have exported would point back at it.
unset RERANKD_TOKENIZER ORT_LIB RERANKD_LOCOMO GOENV GOBIN

c=$(now)
git clone --quiet --no-hardlinks "$repo" "$root/main"
git -C "$root/main" checkout --quiet --detach "$rev"
if [ -d "$repo/../shared" ]; then
  ln -s "$(cd "$repo/../shared" && pwd)" "$root/shared"
fi
echo "phase clone: ok in $(elapsed "$c") s" >&2

echo "fresh-check: $(git -C "$root/main" log -1 --format='%h %s' "$rev") in $root ($caches)" >&2
export RERANKD_PHASE_LOG="$root/phases.log"
: >"$RERANKD_PHASE_LOG"
c=$(now)
set +e
(cd "$root/main" && .ci/run)
rc=$?
set -e
ci_secs=$(elapsed "$c")

phases=$(sed 's/^/  /' "$RERANKD_PHASE_LOG")
cleanup
echo "fresh-check: phases" >&2
echo "$phases" >&2
verdict=PASS
[ "$rc" -eq 0 ] || verdict="FAIL (exit $rc)"
echo "fresh-check: $verdict: .ci/run took $ci_secs s, $(elapsed "$t0") s in all, commit $(git -C "$repo" rev-parse --short "$rev"), $caches" >&2
exit "$rc"
}
