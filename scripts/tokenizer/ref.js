'use strict';
// Shared helpers: locate the tokenizer.json and the reference HF tokenizers
// Node binding (@anush008/tokenizers@0.6.0 = Rust tokenizers 0.22.2).
//
// Env:
//   RERANKD_TOKENIZER   path to tokenizer.json
//                       (default $RERANKD_CACHE/tokenizers/qwen3/tokenizer.json)
//   RERANKD_CACHE       cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/rerankd)
//   RERANKD_HF_TOKENIZERS_DIR  npm prefix holding the reference
//                       (default $RERANKD_CACHE/tools/hf-tokenizers-0.6.0)

const path = require('path');
const os = require('os');

const REF_PACKAGE = '@anush008/tokenizers';
const REF_VERSION = '0.6.0';

function cacheRoot() {
  if (process.env.RERANKD_CACHE) return process.env.RERANKD_CACHE;
  const xdg = process.env.XDG_CACHE_HOME || path.join(process.env.HOME || os.homedir(), '.cache');
  return path.join(xdg, 'rerankd');
}

function tokenizerPath() {
  return process.env.RERANKD_TOKENIZER || path.join(cacheRoot(), 'tokenizers', 'qwen3', 'tokenizer.json');
}

function refDir() {
  return process.env.RERANKD_HF_TOKENIZERS_DIR || path.join(cacheRoot(), 'tools', `hf-tokenizers-${REF_VERSION}`);
}

function loadReference() {
  const modDir = path.join(refDir(), 'node_modules', ...REF_PACKAGE.split('/'));
  let pkg;
  try {
    pkg = require(path.join(modDir, 'package.json'));
  } catch (e) {
    throw new Error(`reference ${REF_PACKAGE}@${REF_VERSION} not found under ${refDir()}; run scripts/tokenizer/regen_golden.sh (or npm install --prefix DIR ${REF_PACKAGE}@${REF_VERSION})`);
  }
  if (pkg.version !== REF_VERSION) {
    throw new Error(`reference version mismatch: want ${REF_VERSION}, found ${pkg.version} at ${modDir}`);
  }
  const { Tokenizer } = require(modDir);
  const tokPath = tokenizerPath();
  return { Tokenizer, tokenizer: Tokenizer.fromFile(tokPath), tokenizerPath: tokPath, modDir, version: pkg.version };
}

module.exports = { cacheRoot, tokenizerPath, refDir, loadReference, REF_PACKAGE, REF_VERSION };
