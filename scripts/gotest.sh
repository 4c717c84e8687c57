#!/usr/bin/env bash
# gotest.sh TIER... [GO TEST FLAGS...]: runs tiers of the Go tests, in the
# order given, each reported as a phase (scripts/phase.sh: go-test-TIER);
# scripts/test_tiers.txt says which package is in which tier and why.
#
#   oracle  the norace packages' whole suites and the mixed packages'
#           other tests (their regexps joined as -skip), without -race
#   race    every other package's whole suite under -race, then the mixed
#           packages' concurrency tests (their -run regexp) under -race
#   short   every package with -short, without -race: the developer's
#           inner loop (make test-short); not a CI tier
#   list    prints each package with its tier (race, norace, mixed REGEXP)
#
# `make test` runs oracle then race: together they run every test of every
# package once, and every test that starts goroutines under the race
# detector (internal/testtiers checks that the joined -skip leaves no test
# of a listed package out of both tiers).
# The tiers of one invocation share the generated test models
# (internal/fixture), so the race tier finds them written.
set -euo pipefail
cd "$(dirname "$0")/.."
one=
if [ "${1:-}" = --one ]; then one=1; shift; fi # one tier, inside its phase
tiers=()
while [ $# -gt 0 ]; do
  case $1 in oracle|race|short|list) tiers+=("$1"); shift ;; *) break ;; esac
done
[ ${#tiers[@]} -gt 0 ] || { echo "usage: scripts/gotest.sh oracle|race|short|list... [go test flags...]" >&2; exit 2; }
GO=${GO:-go}
par=${GOTEST_P:-$(( 2 * $(nproc) ))} # test binaries at once in the race and short tiers (see run_tier)
mod=$($GO list -m)

# Listed packages: "dir tier [regexp]" lines, comments and blanks dropped.
listed=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' scripts/test_tiers.txt)
norace=() mixed=() declare -A regexp=() inlist=()
while read -r dir t re; do
  pkg=$mod/$dir
  inlist[$pkg]=1
  case $t in
    norace) norace+=("$pkg") ;;
    mixed)
      [ -n "$re" ] || { echo "scripts/test_tiers.txt: $dir: mixed needs a -run regexp" >&2; exit 2; }
      mixed+=("$pkg"); regexp[$pkg]=$re ;;
    *) echo "scripts/test_tiers.txt: $dir: unknown tier '$t' (norace or mixed)" >&2; exit 2 ;;
  esac
done <<<"$listed"

# Everything else is raced: read from go list, so a new package is never
# skipped, and a listed package that no longer exists fails the run.
all=$($GO list ./...)
for p in "${!inlist[@]}"; do
  grep -qxF "$p" <<<"$all" || { echo "scripts/test_tiers.txt lists $p, which is not a package of $mod" >&2; exit 2; }
done
raced=()
while read -r p; do [ -n "${inlist[$p]:-}" ] || raced+=("$p"); done <<<"$all"

# The tiny model folders tests generate (internal/fixture) are written once
# for the whole invocation, shared by its test binaries, and removed after.
if [ -z "${RERANKD_TEST_FIXTURES:-}" ]; then
  RERANKD_TEST_FIXTURES=$(mktemp -d "${TMPDIR:-/tmp}/rerankd-fixtures.XXXXXX")
  export RERANKD_TEST_FIXTURES
  trap 'rm -rf "$RERANKD_TEST_FIXTURES"' EXIT
fi

# glibc's malloc backs its large blocks with transparent huge pages where
# the host leaves THP to madvise: the tests' ONNX Runtime sessions (in the
# test binaries and the servers they start) then fault their memory in
# 2 MiB pages rather than 4 KiB ones (docs/testing.md measures it). Go's
# own heap is not malloc's and is unchanged.
export GLIBC_TUNABLES="glibc.malloc.hugetlb=1${GLIBC_TUNABLES:+:$GLIBC_TUNABLES}"

# Flags of the two CI tiers. -ldflags=-w: the test binaries carry no DWARF
# (nothing reads it; stack traces come from the symbol table), which
# shortens each binary's link, and every package links one or two
# (docs/testing.md).
# -vet=off: `make test` runs go vet over the same packages, test files
# included (scripts/together.sh), so go test's subset of it would only
# repeat that in each tier.
ciflags=(-ldflags=-w -vet=off)

# The short tier's longest test binaries (with -short, slowest first).
short_first=(serve model cmd/eval cmd/rerankd cmd/rerankd-bench model/folder)

run_tier() {
  local tier=$1
  shift
  case $tier in
  oracle)
    # A mixed package's goroutine-starting tests run in the race tier only.
    local skip=() joined=
    for p in "${mixed[@]}"; do joined+="${joined:+|}(${regexp[$p]})"; done
    [ -z "$joined" ] || skip=(-skip "$joined")
    $GO test -count=1 "${ciflags[@]}" "${skip[@]}" "$@" "${norace[@]}" "${mixed[@]}" ;;
  race)
    # Raced test binaries wait on servers, PostgreSQL and subprocesses
    # for part of their time: GOTEST_P of them run at once (go test's
    # default is one per core, which left a quarter of two cores idle).
    # The race runtime's 1 s sleep at each binary's exit (atexit_sleep_ms)
    # is dropped: it only gives goroutines still running after the last
    # test time to report a race, and cost a second per test binary.
    # The mixed packages' raced tests (one go test each, as each has its
    # own -run) run one after another beside the whole-suite invocation,
    # not after it: a single package's tests leave part of the cores idle.
    local rc=0 mrc=0 pid=
    export GORACE="atexit_sleep_ms=0${GORACE:+ $GORACE}"
    if [ ${#mixed[@]} -gt 0 ]; then
      (
        r=0
        for p in "${mixed[@]}"; do
          $GO test -race -count=1 "${ciflags[@]}" -run "${regexp[$p]}" "$@" "$p" || r=$?
        done
        exit "$r"
      ) &
      pid=$!
    fi
    $GO test -race -count=1 "${ciflags[@]}" -p "$par" "$@" "${raced[@]}" || rc=$?
    if [ -n "$pid" ]; then wait "$pid" || mrc=$?; fi
    [ "$mrc" -eq 0 ] || rc=$mrc
    return "$rc" ;;
  short)
    # The longest test binaries are given first: go test starts them in
    # the order of its package arguments, and in ./...'s order serve, the
    # longest, started last and ran on alone (docs/testing.md).
    local first=() rest=() p
    for p in "${short_first[@]}"; do
      grep -qxF "$mod/$p" <<<"$all" || { echo "scripts/gotest.sh: short_first names $p, which is not a package of $mod" >&2; return 2; }
      first+=("$mod/$p")
    done
    while read -r p; do [[ " ${first[*]} " == *" $p "* ]] || rest+=("$p"); done <<<"$all"
    $GO test -short -count=1 -ldflags=-w -p "$par" "$@" "${first[@]}" "${rest[@]}" ;;
  list)
    for p in "${raced[@]}"; do echo "race   ${p#"$mod"/}"; done
    for p in "${norace[@]}"; do echo "norace ${p#"$mod"/}"; done
    for p in "${mixed[@]}"; do echo "mixed  ${p#"$mod"/} ${regexp[$p]}"; done ;;
  esac
}

if [ -n "$one" ]; then
  run_tier "${tiers[0]}" "$@"
  exit
fi
rc=0
for t in "${tiers[@]}"; do
  if [ "$t" = list ]; then run_tier list; continue; fi
  scripts/phase.sh "go-test-$t" "$0" --one "$t" "$@" || rc=$?
done
exit "$rc"
