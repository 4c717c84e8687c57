#!/usr/bin/env bash
# Installs what the browser tests need (make test runs it), idempotently:
#   - Debian's Chromium (/usr/bin/chromium), with apt-get when missing
#     (needs root, as CI has; otherwise it says what to run);
#   - npm playwright-core, pinned with its sha512 in scripts/browser/
#     package-lock.json, into $CACHE/tools/browser/<version>/ with `npm ci
#     --ignore-scripts`. playwright-core drives the installed Chromium and
#     never downloads a browser of its own.
# Prints BROWSER_NODE_PATH=... (the tests find it there by default).
# Environment: RERANKD_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/rerankd).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE="${RERANKD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rerankd}"
VERSION=$(sed -n 's/.*"playwright-core": "\([0-9.]*\)".*/\1/p' "$ROOT/scripts/browser/package.json")
DIR="$CACHE/tools/browser/playwright-core-$VERSION"
die() { echo "setup_browser: $*" >&2; exit 1; }

if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup_browser: installing Debian's chromium (once)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 ||
      { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends chromium >/dev/null; } ||
      die "could not install chromium with apt-get"
  else
    die "/usr/bin/chromium is missing: run 'sudo apt-get install chromium'"
  fi
fi

if [ ! -f "$DIR/node_modules/playwright-core/package.json" ] ||
  ! grep -q "\"version\": \"$VERSION\"" "$DIR/node_modules/playwright-core/package.json"; then
  command -v npm >/dev/null || die "npm is needed to install playwright-core"
  echo "setup_browser: installing playwright-core $VERSION into $DIR (once)" >&2
  mkdir -p "$(dirname "$DIR")"
  tmp=$(mktemp -d "$DIR.tmp.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  cp "$ROOT/scripts/browser/package.json" "$ROOT/scripts/browser/package-lock.json" "$tmp/"
  (cd "$tmp" && npm ci --ignore-scripts --loglevel=error --no-audit --no-fund >/dev/null) ||
    die "npm ci of playwright-core $VERSION failed (offline?)"
  rm -rf "$DIR"
  mv "$tmp" "$DIR"
fi
echo "BROWSER_NODE_PATH=$DIR/node_modules"
