#!/usr/bin/env bash
# Installs the CUDA build of ONNX Runtime 1.29.0 into one cached folder,
# $CACHE/onnxruntime-gpu/1.29.0/, for `rerankd serve --provider cuda`
# (which finds it there by default):
#   - libonnxruntime.so.1, the core built with CUDA support, from the npm
#     package onnxruntime-node@1.29.0 (not com.github.asus4.onnxruntime's
#     core: that one is CPU-only);
#   - libonnxruntime_providers_cuda.so and libonnxruntime_providers_shared.so
#     of the same release, from com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9.
# Packages are fetched with `npm pack` (never `npm install`), the tarballs and
# every file taken are checked against the sha256 below, and each file is
# written to a temporary name and renamed into place. Idempotent: when every
# file is present with the right sha256 nothing is downloaded.
#
# At run time the CUDA provider also needs CUDA 13 (libcublasLt.so.13,
# libcublas.so.13, libcurand.so.10, libcudart.so.13; driver >= 580) and
# cuDNN 9 on the library path: docs/perf/gpu.md says where to find them.
#
# Environment: RERANKD_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/rerankd);
# RERANKD_GPU_TARBALLS=DIR takes the two .tgz files from DIR instead of npm
# (an offline machine, the tests); their sha256 is still enforced. The tests
# alone set RERANKD_GPU_{CORE_TGZ,CUDA_TGZ,CORE,CUDA,SHARED}_SHA256 to check
# fake packages.
# Prints ORT_GPU_LIB=<core>; exits non-zero with a reason on any failure.
set -euo pipefail

ORT_GPU_VERSION=1.29.0
CORE_PKG="onnxruntime-node@${ORT_GPU_VERSION}"
CORE_TGZ="onnxruntime-node-${ORT_GPU_VERSION}.tgz"
CORE_TGZ_SHA256=${RERANKD_GPU_CORE_TGZ_SHA256:-cfdfb45ec4044b1fdca43e5d2e180fb6817e649ff8ad1e0dfc90e18e51b67037}
CORE_MEMBER="package/bin/napi-v6/linux/x64/libonnxruntime.so.1"
CORE_SHA256=${RERANKD_GPU_CORE_SHA256:-89688f5cf51c7e31befbb7b9101bc027799009b18d1baa9a5b1146a72e69538d}

CUDA_PKG="com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9"
CUDA_TGZ="com.github.asus4.onnxruntime.linux-x64-gpu-0.4.9.tgz"
CUDA_TGZ_SHA256=${RERANKD_GPU_CUDA_TGZ_SHA256:-2b459e0c17f340c92970c10ed86de4f37a3009f93c14053e6ad4334cbb6be412}
CUDA_MEMBER="package/Plugins/Linux/x64/libonnxruntime_providers_cuda.so"
CUDA_SHA256=${RERANKD_GPU_CUDA_SHA256:-56cf3254b118ad837ccc4ed8f6d1b23504bbf7ef91b34cbc0b289cb7f10b3037}
SHARED_MEMBER="package/Plugins/Linux/x64/libonnxruntime_providers_shared.so"
SHARED_SHA256=${RERANKD_GPU_SHARED_SHA256:-c6a12593396095f5670160e284c35d1700b7708cf3037b7042e2a5200ccae772}

CACHE="${RERANKD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rerankd}"
GPU_DIR="$CACHE/onnxruntime-gpu/$ORT_GPU_VERSION"

case "${1:-}" in
  -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
  "") ;;
  *) echo "setup-gpu: unknown argument $1 (see --help)" >&2; exit 2 ;;
esac

die() { echo "setup-gpu: $*" >&2; exit 1; }
sha() { sha256sum "$1" | cut -d' ' -f1; }
have() { [ -n "$2" ] && [ -f "$1" ] && [ "$(sha "$1")" = "$2" ]; }

if have "$GPU_DIR/libonnxruntime.so.1" "$CORE_SHA256" &&
   have "$GPU_DIR/libonnxruntime_providers_cuda.so" "$CUDA_SHA256" &&
   have "$GPU_DIR/libonnxruntime_providers_shared.so" "$SHARED_SHA256"; then
  echo "ORT_GPU_LIB=$GPU_DIR/libonnxruntime.so.1"
  exit 0
fi

mkdir -p "$CACHE"
tmp=$(mktemp -d "$CACHE/.dl-gpu.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# tarball PKG FILE SHA: FILE in $tmp, from RERANKD_GPU_TARBALLS or npm pack,
# checked against SHA.
tarball() {
  local pkg=$1 file=$2 want=$3 got
  if [ -n "${RERANKD_GPU_TARBALLS:-}" ]; then
    [ -f "$RERANKD_GPU_TARBALLS/$file" ] || die "RERANKD_GPU_TARBALLS=$RERANKD_GPU_TARBALLS has no $file"
    cp "$RERANKD_GPU_TARBALLS/$file" "$tmp/$file"
  else
    command -v npm >/dev/null || die "npm is needed to download $pkg (or put $file in a folder and set RERANKD_GPU_TARBALLS)"
    echo "setup-gpu: downloading $pkg from the npm registry" >&2
    if ! (cd "$tmp" && npm pack --loglevel=error "$pkg" >pack.log 2>&1); then
      die "could not download $pkg from the npm registry (offline? proxy?): $(tail -n 3 "$tmp/pack.log")
       On a machine with access run \`npm pack $pkg\` and set RERANKD_GPU_TARBALLS to the folder holding $file."
    fi
  fi
  got=$(sha "$tmp/$file")
  [ "$got" = "$want" ] || die "checksum mismatch for $file: got $got, want $want (nothing installed)"
}

# take TGZ MEMBER NAME SHA: extract MEMBER into $tmp/out/NAME and check it.
take() {
  local tgz=$1 member=$2 name=$3 want=$4 got
  mkdir -p "$tmp/x" "$tmp/out"
  tar -xzf "$tmp/$tgz" -C "$tmp/x" "$member" || die "$tgz has no $member"
  mv "$tmp/x/$member" "$tmp/out/$name"
  got=$(sha "$tmp/out/$name")
  [ "$got" = "$want" ] || die "checksum mismatch for $member in $tgz: got $got, want $want (nothing installed)"
}

tarball "$CORE_PKG" "$CORE_TGZ" "$CORE_TGZ_SHA256"
tarball "$CUDA_PKG" "$CUDA_TGZ" "$CUDA_TGZ_SHA256"
take "$CORE_TGZ" "$CORE_MEMBER" libonnxruntime.so.1 "$CORE_SHA256"
take "$CUDA_TGZ" "$CUDA_MEMBER" libonnxruntime_providers_cuda.so "$CUDA_SHA256"
take "$CUDA_TGZ" "$SHARED_MEMBER" libonnxruntime_providers_shared.so "$SHARED_SHA256"

# every file checked: move them in, each by temp name + rename
mkdir -p "$GPU_DIR"
for f in libonnxruntime_providers_shared.so libonnxruntime_providers_cuda.so libonnxruntime.so.1; do
  mv -f "$tmp/out/$f" "$GPU_DIR/.$f.tmp.$$" && mv -f "$GPU_DIR/.$f.tmp.$$" "$GPU_DIR/$f"
  echo "setup-gpu: installed $f (sha256 $(sha "$GPU_DIR/$f"))" >&2
done
echo "ORT_GPU_LIB=$GPU_DIR/libonnxruntime.so.1"
