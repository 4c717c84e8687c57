#!/usr/bin/env bash
# Downloads the Debian packages of the image's base layer, exactly as pinned
# in packaging/debian.lock (name version arch sha256), into
# $CACHE/debs/NAME_VERSION_ARCH.deb with `apt-get download`, and checks
# each against its sha256. Idempotent: files already there with the right
# sha256 are kept. A pinned version apt no longer offers (after
# `apt-get update`) is an error naming scripts/pin_debs.sh.
#
# Also makes sure the tools `make image-test` runs the image with are
# there (unshare, chroot, mount from util-linux/coreutils/mount, ip from
# iproute2): apt-get install of the missing ones when run as root.
#
# Environment: RERANKD_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/rerankd).
# Prints the folder of the packages.
set -euo pipefail
LOCK="$(cd "$(dirname "$0")/.." && pwd)/packaging/debian.lock"
CACHE="${RERANKD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rerankd}"
DEBS="$CACHE/debs"
die() { echo "setup_image: $*" >&2; exit 1; }
sha() { sha256sum "$1" | cut -d' ' -f1; }
command -v apt-get >/dev/null || die "apt-get is needed to download the Debian packages of the base layer"
mkdir -p "$DEBS"
tmp=$(mktemp -d "$DEBS/.dl.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
updated=""
while read -r name version arch want; do
  case "$name" in ''|'#'*) continue ;; esac
  dest="$DEBS/${name}_${version//:/%3a}_${arch}.deb"
  [ -f "$dest" ] && [ "$(sha "$dest")" = "$want" ] && continue
  rm -f "$tmp"/*.deb
  if ! (cd "$tmp" && apt-get download -qq "$name=$version" >/dev/null 2>&1); then
    if [ -z "$updated" ] && [ "$(id -u)" = 0 ]; then
      apt-get update -qq && updated=1
    fi
    (cd "$tmp" && apt-get download -qq "$name=$version" >"$tmp/log" 2>&1) ||
      die "apt offers no $name=$version (pinned in packaging/debian.lock): $(tail -n 2 "$tmp/log")
       Run scripts/pin_debs.sh to pin the versions apt has now, and commit the lock."
  fi
  got=$(sha "$tmp"/*.deb)
  [ "$got" = "$want" ] || die "checksum mismatch for $name=$version: got $got, want $want (not installed)"
  mv -f "$tmp"/*.deb "$dest"
done <"$LOCK"
missing=()
for t in unshare:util-linux chroot:coreutils mount:mount ip:iproute2; do
  PATH="$PATH:/usr/sbin:/sbin" command -v "${t%%:*}" >/dev/null || missing+=("${t#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || die "make image-test needs ${missing[*]} (install them, as root: apt-get install ${missing[*]})"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
echo "DEBS=$DEBS"
