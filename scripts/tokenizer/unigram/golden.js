#!/usr/bin/env node
'use strict';
// Adds the reference's (Rust HF tokenizers 0.22.2) encodings to the Unigram
// corpus written by build.py: for each tokenizer file, every string without
// and with special tokens, and pairs of neighbouring strings truncated
// LongestFirst and OnlySecond at several lengths.
//
// usage: node golden.js DIR   (DIR holds build.py's output; rewrites DIR/golden-*.jsonl)
process.env.TOKENIZERS_PARALLELISM = 'false';
const fs = require('fs');
const path = require('path');
const { refDir, REF_PACKAGE } = require('../ref');
const { Tokenizer } = require(path.join(refDir(), 'node_modules', ...REF_PACKAGE.split('/')));

const LENGTHS = [6, 9, 16, 33, 128];

async function main() {
  const dir = process.argv[2];
  const corpus = fs.readFileSync(path.join(dir, 'corpus.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  for (const file of fs.readdirSync(dir).filter((f) => /\.json$/.test(f))) {
    const name = file.replace(/\.json$/, '');
    const tok = Tokenizer.fromFile(path.join(dir, file));
    const out = [];
    for (const c of corpus) {
      const plain = await tok.encode(c.text, null, { addSpecialTokens: false });
      const spec = await tok.encode(c.text, null, { addSpecialTokens: true });
      out.push({ text: c.text, ids: Array.from(plain.getIds()), special: Array.from(spec.getIds()),
        decoded: await tok.decode(Array.from(plain.getIds()), false) });
    }
    for (let i = 0; i + 1 < corpus.length && i < 300; i++) {
      const a = corpus[i].text, b = corpus[i + 1].text;
      for (const strategy of ['LongestFirst', 'OnlySecond']) {
        for (const maxLength of LENGTHS) {
          tok.setTruncation(maxLength, { strategy });
          const rec = { text: a, pair: b, max_len: maxLength, strategy };
          try {
            const e = await tok.encode(a, b, { addSpecialTokens: true });
            rec.ids = Array.from(e.getIds());
            rec.type_ids = Array.from(e.getTypeIds());
          } catch (err) {
            rec.error = true;
          }
          out.push(rec);
        }
      }
      tok.disableTruncation();
      const e = await tok.encode(a, b, { addSpecialTokens: true });
      out.push({ text: a, pair: b, max_len: 0, strategy: 'LongestFirst', ids: Array.from(e.getIds()), type_ids: Array.from(e.getTypeIds()) });
    }
    fs.writeFileSync(path.join(dir, `golden-${name}.jsonl`), out.map((r) => JSON.stringify(r)).join('\n') + '\n');
    console.error(`${name}: ${out.length} records`);
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
