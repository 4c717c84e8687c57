#!/usr/bin/env node
'use strict';
// Writes the reference's (Rust HF tokenizers 0.22.2) verdict on every code
// point for the character properties the components use, so the Go tables
// (Go's unicode 17, golang.org/x/text 17) can be checked against the
// reference's older ones one code point at a time:
//   punct    Punctuation / BertPreTokenizer (ascii punctuation or P*)
//   word     Whitespace's \w (Rust regex)
//   space    WhitespaceSplit (char::is_whitespace)
//   numeric  Digits (char::is_numeric)
//   mark     StripAccents (is_combining_mark)
//   mn       BertNormalizer's strip_accents (is_mark_nonspacing)
//   ctrl     characters BertNormalizer's clean_text removes
//   lower, nfd, nfkd, nfc, nfkc: the char's mapping where it is not itself
// Predicates are written as [lo, hi] ranges, mappings as {cp: string}.
// probes: NFD of "a" + c + U+0334 (class 1) and "a" + U+0345 (class 240) + c
// where the reference reorders them (c has a non-zero combining class in
// its tables), for every c without a decomposition of its own.
//
// usage: node props.js OUT.json
process.env.TOKENIZERS_PARALLELISM = 'false';
const fs = require('fs');
const path = require('path');
const { refDir, REF_PACKAGE } = require('../ref');
const T = require(path.join(refDir(), 'node_modules', ...REF_PACKAGE.split('/')));

function withPre(pre) {
  const j = { version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null, pre_tokenizer: pre,
    post_processor: null, decoder: null, model: { type: 'Unigram', unk_id: 0, vocab: [['<unk>', 0]], byte_fallback: false } };
  return T.Tokenizer.fromString(JSON.stringify(j)).getPreTokenizer();
}
const punct = T.punctuationPreTokenizer();
const white = T.whitespacePreTokenizer();
const wsplit = T.whitespaceSplitPreTokenizer();
const digits = withPre({ type: 'Digits', individual_digits: true });
const strip = T.stripAccentsNormalizer();
const bertStrip = T.bertNormalizer({ cleanText: false, handleChineseChars: false, stripAccents: true, lowercase: false });
const bertClean = T.bertNormalizer({ cleanText: true, handleChineseChars: false, stripAccents: false, lowercase: false });
const norms = { lower: T.lowercase(), nfd: T.nfdNormalizer(), nfkd: T.nfkdNormalizer(), nfc: T.nfcNormalizer(), nfkc: T.nfkcNormalizer() };

const sets = { punct: [], word: [], space: [], numeric: [], mark: [], mn: [], ctrl: [] };
const maps = { lower: {}, nfd: {}, nfkd: {}, nfc: {}, nfkc: {} };
const probes = {};
function add(list, cp) {
  const last = list[list.length - 1];
  if (last && last[1] === cp - 1) last[1] = cp; else list.push([cp, cp]);
}
for (let cp = 0; cp <= 0x10ffff; cp++) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue;
  const c = String.fromCodePoint(cp);
  if (punct.preTokenizeString('x' + c + 'x').length === 3) add(sets.punct, cp);
  const w = white.preTokenizeString('x' + c);
  if (w.length === 1 && w[0][0] === 'x' + c) add(sets.word, cp);
  if (wsplit.preTokenizeString('x' + c + 'x').length === 2) add(sets.space, cp);
  if (digits.preTokenizeString('x' + c).length === 2) add(sets.numeric, cp);
  if (strip.normalizeString(c) === '') add(sets.mark, cp);
  if (bertStrip.normalizeString('a' + c) === 'a') add(sets.mn, cp);
  if (bertClean.normalizeString('a' + c + 'a') === 'aa') add(sets.ctrl, cp);
  for (const [k, n] of Object.entries(norms)) {
    const out = n.normalizeString(c);
    if (out !== c) maps[k][cp] = out;
  }
  if (!(cp in maps.nfd)) {
    for (const p of ['a' + c + '\u0334', 'a\u0345' + c]) {
      const out = norms.nfd.normalizeString(p);
      if (out !== p) probes[p] = out;
    }
  }
}
fs.writeFileSync(process.argv[2], JSON.stringify({ reference: 'tokenizers 0.22.2', sets, maps, probes }) + '\n');
console.error(Object.entries(sets).map(([k, v]) => `${k}: ${v.length} ranges`).join(', '));
