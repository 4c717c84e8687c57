#!/usr/bin/env bash
# Installs the MCP tests' client (make test runs it), idempotently: npm
# @modelcontextprotocol/sdk (the official TypeScript SDK), pinned with its
# dependencies' sha512 in scripts/mcp/package-lock.json, into
# $CACHE/tools/mcp/sdk-<version>/ with `npm ci --ignore-scripts`.
# Prints MCP_NODE_PATH=... (the tests find it there by default).
# Environment: RERANKD_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/rerankd).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE="${RERANKD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rerankd}"
VERSION=$(sed -n 's/.*"@modelcontextprotocol\/sdk": "\([0-9.]*\)".*/\1/p' "$ROOT/scripts/mcp/package.json")
DIR="$CACHE/tools/mcp/sdk-$VERSION"
PKG="$DIR/node_modules/@modelcontextprotocol/sdk/package.json"
die() { echo "setup_mcp: $*" >&2; exit 1; }

# The lock can change without the version (a dependency re-pinned): keep
# the lock that was installed beside it, and reinstall when they differ.
if [ ! -f "$PKG" ] || ! grep -q "\"version\": \"$VERSION\"" "$PKG" ||
  ! cmp -s "$ROOT/scripts/mcp/package-lock.json" "$DIR/package-lock.json"; then
  command -v npm >/dev/null || die "npm is needed to install @modelcontextprotocol/sdk"
  echo "setup_mcp: installing @modelcontextprotocol/sdk $VERSION into $DIR (once)" >&2
  mkdir -p "$(dirname "$DIR")"
  tmp=$(mktemp -d "$DIR.tmp.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  cp "$ROOT/scripts/mcp/package.json" "$ROOT/scripts/mcp/package-lock.json" "$tmp/"
  (cd "$tmp" && npm ci --ignore-scripts --loglevel=error --no-audit --no-fund >/dev/null) ||
    die "npm ci of @modelcontextprotocol/sdk $VERSION failed (offline?)"
  rm -rf "$DIR"
  mv "$tmp" "$DIR"
fi
echo "MCP_NODE_PATH=$DIR/node_modules"
