#!/usr/bin/env node
'use strict';
// Differential check beyond the golden corpus: the reference's ids (and
// their decoding) for
// random strings over the corpus's hardest characters (and for the strings
// of an optional JSONL file, e.g. the Go fuzzer's corpus exported by
// TestExportFuzzCorpus), for every configuration in testdata/components.
// TestComponentsDiff compares ours with them:
//
//   [DIFF_N=3000] node scripts/tokenizer/components/diff.js OUT.jsonl [TEXTS.jsonl]
//   RERANKD_COMPONENTS_DIFF=OUT.jsonl go test ./tokenizer -run TestComponentsDiff
process.env.TOKENIZERS_PARALLELISM = 'false';
const fs = require('fs');
const path = require('path');
const { refDir, REF_PACKAGE } = require('../ref');
const { Tokenizer } = require(path.join(refDir(), 'node_modules', ...REF_PACKAGE.split('/')));

const td = path.resolve(__dirname, '../../../tokenizer/testdata');
const POOL = [...'aAzZ09 \t\n\r\u3000\u00a0\u2028.,;:!?-_()[]{}<>@#%&*/\\\'"`~^|+=$€£¥¼½²³①Ⅻ١٢३'
  + 'éÉèçñüÜößẞİıΣσςﬁﬂﬀ㎏™…ＡＺａｚ０９！？ｶﾞ한각中文日本語'
  + '\u0301\u0308\u0323\u0307\u0345\u0334\u093f\u094d\u064e\u05b0\u0897\u1acf\u200b\u200c\u200d\ufeff\u00ad\u0000\u0001\u007f\ufffd'
  + '👍🏽👨‍👩‍👧🏳️‍🌈\ua7f2\u2e52\u061d\ue000▁'];
for (const c of ['\ud838\udc30', '\ud806\udd35', '\ud806\udd30', '\ud801\uddd2', '\ud804\udf82', '\ud804\udfc9', '\ud803\udd69', '\u{1e95e}']) POOL.push(c);

async function main() {
  const [outFile, extra] = process.argv.slice(2);
  let seed = 99;
  const rnd = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x7fffffff; };
  const texts = [];
  const n = Number(process.env.DIFF_N || 3000);
  for (let i = 0; i < n; i++) {
    let s = '';
    for (let k = 0, n = 1 + Math.floor(rnd() * 24); k < n; k++) s += POOL[Math.floor(rnd() * POOL.length)];
    texts.push(s);
  }
  if (extra) for (const l of fs.readFileSync(extra, 'utf8').split('\n')) if (l) texts.push(JSON.parse(l).text);
  const out = [];
  const files = [];
  for (const d of ['components', 'unigram', 'wordpiece']) {
    for (const f of fs.readdirSync(path.join(td, d)).sort()) {
      if (/\.json$/.test(f) && !/-ref\.json$/.test(f)) files.push(`${d}/${f.replace(/\.json$/, '')}`);
    }
  }
  for (const config of files) {
    const tok = Tokenizer.fromFile(path.join(td, config + '.json'));
    for (const text of texts) {
      const e = await tok.encode(text, null, { addSpecialTokens: false });
      const ids = Array.from(e.getIds());
      out.push(JSON.stringify({ config, text, ids, decoded: await tok.decode(ids, false) }));
    }
  }
  fs.writeFileSync(outFile, out.join('\n') + '\n');
  console.error(`${texts.length} strings x ${out.length / texts.length} configurations`);
}
main().catch((e) => { console.error(e); process.exit(1); });
