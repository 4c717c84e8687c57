#!/usr/bin/env bash
# Installs the embedding tests' real clients (make test runs it),
# idempotently: the npm packages of scripts/clients/package.json (OpenAI's
# SDK, LangChain's @langchain/openai, the Vercel AI SDK with
# @ai-sdk/openai-compatible, @huggingface/inference), pinned with their
# dependencies' sha512 in scripts/clients/package-lock.json, into
# $CACHE/tools/clients/<first 16 hex of the lock's sha256>/ with
# `npm ci --ignore-scripts`. Prints CLIENTS_NODE_PATH=... (the tests find
# it there by default: internal/testenv.ClientsNodePath).
# Environment: RERANKD_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/rerankd).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE="${RERANKD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rerankd}"
LOCK="$ROOT/scripts/clients/package-lock.json"
KEY=$(sha256sum "$LOCK" | cut -c1-16)
DIR="$CACHE/tools/clients/$KEY"
die() { echo "setup_clients: $*" >&2; exit 1; }

if [ ! -f "$DIR/.installed" ]; then
  command -v npm >/dev/null || die "npm is needed to install the client SDKs"
  echo "setup_clients: installing the client SDKs into $DIR (once)" >&2
  mkdir -p "$(dirname "$DIR")"
  tmp=$(mktemp -d "$DIR.tmp.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  cp "$ROOT/scripts/clients/package.json" "$LOCK" "$tmp/"
  (cd "$tmp" && npm ci --ignore-scripts --loglevel=error --no-audit --no-fund >/dev/null) ||
    die "npm ci of scripts/clients failed (offline?)"
  touch "$tmp/.installed"
  rm -rf "$DIR"
  mv "$tmp" "$DIR"
fi
echo "CLIENTS_NODE_PATH=$DIR/node_modules"
