#!/usr/bin/env bash
# Runs govulncheck over the module without reaching vuln.go.dev (which CI
# cannot reach): the vulnerability database is built locally from a pinned
# snapshot of the golang.org/x/vulndb module, fetched through the Go module
# proxy like any other module.
#
#   1. govulncheck $GOVULNCHECK_VERSION is installed once into the cache
#      (go install verifies the module against go.sum / sum.golang.org).
#   2. golang.org/x/vulndb@$VULNDB_VERSION is fetched with `go mod download`,
#      which checks the zip against the checksum database; the h1: hash the go
#      tool reports must also equal $VULNDB_SUM (pinned here), so a proxy or
#      GONOSUMDB setting cannot substitute other data.
#   3. Its data/osv/*.json (the OSV entries vuln.go.dev serves) are laid out
#      as a v1 database (index/db.json, index/modules.json, index/vulns.json,
#      ID/<id>.json) under $CACHE/vulndb/$VULNDB_VERSION. Built in a temp
#      folder and renamed into place, so a re-run reuses it and an
#      interrupted run leaves nothing half-built. (vulndb's own cmd/indexdb
#      does the same but pulls ~470 packages - go-git, Cloud SDKs - to build.)
#   4. `govulncheck -db file://... ./...` runs; it exits non-zero only when
#      a vulnerable symbol is reachable from our code (findings in imported
#      packages or required modules that we never call are listed, not fatal).
#
# The snapshot's commit time is printed as the database date: findings
# published after it are not seen. Refresh by bumping VULNDB_VERSION and
# VULNDB_SUM (`go list -m -json golang.org/x/vulndb@master` shows the newest;
# `go mod download -json golang.org/x/vulndb@VERSION` prints its Sum).
#
# Usage: scripts/vulncheck.sh [extra govulncheck flags, e.g. -show verbose]
# Environment: RERANKD_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/rerankd),
# VULNDB_STALE_DAYS (warn when the snapshot is older; default 60).
set -euo pipefail

GOVULNCHECK_VERSION=v1.9.0
VULNDB_VERSION=v0.0.0-20261105234957-e22db6528018
VULNDB_SUM=h1:mfngRv0Yoh0VApsXKEN82CjD99kl7mtparN3bs3JnqI=
STALE_DAYS=${VULNDB_STALE_DAYS:-60}

GO=${GO:-go}
CACHE="${RERANKD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rerankd}"
ROOT=$(cd "$(dirname "$0")/.." && pwd)

die() { echo "vulncheck: $*" >&2; exit 1; }
command -v python3 >/dev/null || die "python3 is needed to index the database"

TMPS=()
trap 'rm -rf "${TMPS[@]}"' EXIT

# 1. The tool. Keyed by the Go version too: govulncheck loads packages with
# the go command, and a binary built by an older toolchain can misread newer
# export data.
gover=$("$GO" env GOVERSION)
TOOL_DIR="$CACHE/tools/govulncheck/$GOVULNCHECK_VERSION-$gover"
TOOL="$TOOL_DIR/govulncheck"
if [ ! -x "$TOOL" ]; then
  echo "vulncheck: installing govulncheck $GOVULNCHECK_VERSION (once)" >&2
  mkdir -p "$TOOL_DIR"
  # Outside the repo so its go.mod/go.sum are neither read nor touched, and
  # without GOFLAGS: a -mod=... there makes `go install pkg@version` refuse.
  (cd / && GOBIN="$TOOL_DIR" GOFLAGS='' "$GO" install "golang.org/x/vuln/cmd/govulncheck@$GOVULNCHECK_VERSION") ||
    die "could not install govulncheck $GOVULNCHECK_VERSION from the Go module proxy"
fi

# 2 + 3. The database.
DB="$CACHE/vulndb/$VULNDB_VERSION"
if [ ! -f "$DB/index/modules.json" ] || [ "$(cat "$DB/SUM" 2>/dev/null)" != "$VULNDB_SUM" ]; then
  echo "vulncheck: building the vulnerability database from golang.org/x/vulndb@$VULNDB_VERSION (once)" >&2
  mkdir -p "$CACHE/vulndb"
  dl=$(cd / && GOFLAGS='' "$GO" mod download -json "golang.org/x/vulndb@$VULNDB_VERSION") ||
    die "could not download golang.org/x/vulndb@$VULNDB_VERSION (offline? checksum mismatch?): $dl"
  meta=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("Sum",""), d.get("Dir",""), d.get("Info",""), d.get("Error",""))' <<<"$dl")
  read -r sum dir info err <<<"$meta"
  [ -z "$err" ] || die "go mod download: $err"
  [ "$sum" = "$VULNDB_SUM" ] || die "golang.org/x/vulndb@$VULNDB_VERSION has sum $sum, want $VULNDB_SUM (not used)"
  [ -d "$dir/data/osv" ] || die "golang.org/x/vulndb@$VULNDB_VERSION has no data/osv"
  tmp=$(mktemp -d "$CACHE/vulndb/.build.XXXXXX"); TMPS+=("$tmp")
  python3 - "$dir/data/osv" "$tmp" "$info" <<'PY'
import json, os, sys
src, out, info = sys.argv[1:4]
# The snapshot's entries carry zero "modified" times (vuln.go.dev fills them
# from git history), so the database date is the snapshot's commit time.
snap = json.load(open(info))["Time"]
os.makedirs(os.path.join(out, "ID"))
os.makedirs(os.path.join(out, "index"))
modules, vulns = {}, []
for name in sorted(os.listdir(src)):
    if not name.endswith(".json"):
        continue
    with open(os.path.join(src, name), "rb") as f:
        raw = f.read()
    e = json.loads(raw)
    if name != e["id"] + ".json":
        sys.exit(f"{name}: id {e['id']} does not match the file name")
    with open(os.path.join(out, "ID", name), "wb") as f:
        f.write(raw)
    mod = e.get("modified") or snap
    vulns.append({"id": e["id"], "modified": mod, "aliases": e.get("aliases", [])})
    for a in e.get("affected", []):
        path = a["package"]["name"]
        # No "fixed" hint: govulncheck then reads every entry of a module we
        # use and decides from its full ranges. Slower by a few files, never
        # wrong (a wrong hint would hide a vulnerability).
        modules.setdefault(path, []).append({"id": e["id"], "modified": mod})
idx = [{"path": p, "vulns": sorted(v, key=lambda x: x["id"])} for p, v in sorted(modules.items())]
json.dump({"modified": snap}, open(os.path.join(out, "index", "db.json"), "w"))
json.dump(idx, open(os.path.join(out, "index", "modules.json"), "w"), separators=(",", ":"))
json.dump(vulns, open(os.path.join(out, "index", "vulns.json"), "w"), separators=(",", ":"))
print(f"vulncheck: indexed {len(vulns)} entries for {len(modules)} modules", file=sys.stderr)
PY
  echo "$VULNDB_SUM" >"$tmp/SUM"
  echo "$VULNDB_VERSION" >"$tmp/VERSION"
  chmod -R a+rX "$tmp"
  # A stale or half-written folder goes; if a concurrent run has just
  # installed the same snapshot, mv -T fails and that one is used.
  if [ "$(cat "$DB/SUM" 2>/dev/null)" != "$VULNDB_SUM" ]; then rm -rf "$DB"; fi
  mv -T "$tmp" "$DB" 2>/dev/null || [ "$(cat "$DB/SUM" 2>/dev/null)" = "$VULNDB_SUM" ] ||
    die "could not install the database into $DB"
fi

# Staleness: the database knows nothing published after this date.
dbdate=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["modified"])' "$DB/index/db.json")
age=$(( ( $(date -u +%s) - $(date -u -d "$dbdate" +%s) ) / 86400 ))
echo "vulncheck: govulncheck $GOVULNCHECK_VERSION ($gover), database golang.org/x/vulndb@$VULNDB_VERSION dated $dbdate ($age days old)" >&2
if [ "$age" -gt "$STALE_DAYS" ]; then
  echo "vulncheck: WARNING: the database is older than $STALE_DAYS days; bump VULNDB_VERSION in $0" >&2
fi

cd "$ROOT"
exec "$TOOL" -db "file://$DB" "$@" ./...
