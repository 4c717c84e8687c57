#!/usr/bin/env node
'use strict';
// Generates tokenizer/testdata/golden.jsonl: for every corpus string, the ids
// produced by the reference Rust HF tokenizers (add_special_tokens=false) and
// the reference decode(ids, skip_special_tokens=false).
//
// Usage: node scripts/tokenizer/golden.js [output-path]
// (normally via scripts/tokenizer/regen_golden.sh)

process.env.TOKENIZERS_PARALLELISM = process.env.TOKENIZERS_PARALLELISM || 'false';

const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const { buildCorpusWithCategories } = require('./corpus');
const { loadReference } = require('./ref');

const OPTS = { addSpecialTokens: false };

async function main() {
  const out = process.argv[2] || path.join(__dirname, '..', '..', 'tokenizer', 'testdata', 'golden.jsonl');
  const ref = loadReference();
  const tok = ref.tokenizer;
  const corpus = buildCorpusWithCategories();

  const lines = [];
  const cats = {};
  let totalTokens = 0;
  let decodedDiffers = 0; // decoded != text (expected only via NFC normalization)
  let decodedNotNfc = 0; // decoded != NFC(text) outside special tokens (should be 0)
  let batchMismatch = 0;
  let nonNfcExamples = [];

  // Per-string encode is the source of truth; encodeBatch is cross-checked.
  const batch = await tok.encodeBatch(corpus.map((e) => e.text), OPTS);
  if (batch.length !== corpus.length) throw new Error('encodeBatch length mismatch');

  for (let i = 0; i < corpus.length; i++) {
    const { text, category } = corpus[i];
    const enc = await tok.encode(text, null, OPTS);
    const ids = Array.from(enc.getIds());
    for (const id of ids) if (!Number.isInteger(id) || id < 0) throw new Error(`bad id ${id} for #${i}`);
    const bids = Array.from(batch[i].getIds());
    if (bids.length !== ids.length || bids.some((v, k) => v !== ids[k])) batchMismatch++;
    const decoded = await tok.decode(ids, false);
    if (text.length > 0 && ids.length === 0) throw new Error(`no tokens for non-empty #${i}`);
    if (decoded !== text) {
      decodedDiffers++;
      if (decoded !== text.normalize('NFC')) {
        decodedNotNfc++;
        if (nonNfcExamples.length < 5) nonNfcExamples.push({ i, category, text, decoded });
      }
    }
    totalTokens += ids.length;
    const c = (cats[category] = cats[category] || { strings: 0, tokens: 0 });
    c.strings++;
    c.tokens += ids.length;
    lines.push(JSON.stringify({ text, ids, decoded }));
  }

  const data = lines.join('\n') + '\n';
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, data);

  if (batchMismatch) throw new Error(`encodeBatch disagrees with encode on ${batchMismatch} strings`);

  const summary = {
    output: path.relative(process.cwd(), out),
    reference: `@anush008/tokenizers@${ref.version}`,
    tokenizer: ref.tokenizerPath,
    tokenizer_sha256: crypto.createHash('sha256').update(fs.readFileSync(ref.tokenizerPath)).digest('hex'),
    count: corpus.length,
    total_tokens: totalTokens,
    bytes: Buffer.byteLength(data),
    sha256: crypto.createHash('sha256').update(data).digest('hex'),
    decoded_differs_from_text: decodedDiffers,
    decoded_differs_from_nfc_text: decodedNotNfc,
    categories: cats,
  };
  console.log(JSON.stringify(summary, null, 1));
  if (nonNfcExamples.length) console.log('examples decoded != NFC(text):', JSON.stringify(nonNfcExamples));
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
