#!/usr/bin/env bash
# Rewrites packaging/debian.lock, the Debian packages of the image's base
# layer, from apt's current lists: one line per package, "name version
# arch sha256" (sha256 of the .deb, from the archive's signed index).
# Run it when scripts/setup_image.sh says a pinned version is gone from the
# mirror (a Debian point or security release replaced it), then commit the
# lock: the image's digest changes with it.
#
#   scripts/pin_debs.sh [PACKAGE...]   (default: the packages already pinned)
set -euo pipefail
LOCK="$(dirname "$0")/../packaging/debian.lock"
if [ $# -eq 0 ]; then
  set -- $(grep -v '^#' "$LOCK" | awk 'NF {print $1}')
fi
apt-get update -qq
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT
sed -n '/^#/p' "$LOCK" >"$tmp"
for p in "$@"; do
  apt-cache show --no-all-versions "$p" | awk -v p="$p" '
    /^Version:/ {v=$2} /^Architecture:/ {a=$2} /^SHA256:/ {s=$2}
    END { if (v == "" || s == "") { print "pin_debs: apt knows no " p > "/dev/stderr"; exit 1 } print p, v, a, s }' >>"$tmp"
done
mv "$tmp" "$LOCK"; trap - EXIT
cat "$LOCK"
