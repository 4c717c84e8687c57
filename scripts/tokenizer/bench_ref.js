#!/usr/bin/env node
'use strict';
// Reference speed of the Rust HF tokenizers (Node binding) on the golden
// corpus, single core. Run it pinned to one core:
//
//   RAYON_NUM_THREADS=1 taskset -c 0 node scripts/tokenizer/bench_ref.js [reps]
//
// reps: argv[2] or env BENCH_REPS (default 5). GOLDEN overrides the corpus
// file. Prints one JSON line. Top-level seconds/tokens_per_s are for mode
// "encodeBatch" (one encodeBatch call over the whole corpus per pass);
// "encode_loop" has the same for one awaited encode() per string. "seconds"
// is the best pass; "tokens" is the total per pass.

// Must be set before the native module is loaded.
process.env.RAYON_NUM_THREADS = '1';
process.env.TOKENIZERS_PARALLELISM = 'false';

const fs = require('fs');
const path = require('path');
const { loadReference } = require('./ref');

const OPTS = { addSpecialTokens: false };

async function main() {
  const reps = Math.max(1, parseInt(process.argv[2] || process.env.BENCH_REPS || '5', 10));
  const file = process.env.GOLDEN || path.join(__dirname, '..', '..', 'tokenizer', 'testdata', 'golden.jsonl');
  const texts = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l).text);
  const bytes = texts.reduce((s, t) => s + Buffer.byteLength(t), 0);
  const ref = loadReference();
  const tok = ref.tokenizer;

  const countTokens = (encs) => encs.reduce((s, e) => s + e.getIds().length, 0);

  // Warm-up (both paths).
  let tokens = countTokens(await tok.encodeBatch(texts, OPTS));
  for (const t of texts) await tok.encode(t, null, OPTS);

  const results = [];
  {
    let best = Infinity;
    for (let r = 0; r < reps; r++) {
      const t0 = process.hrtime.bigint();
      const encs = await tok.encodeBatch(texts, OPTS);
      const dt = Number(process.hrtime.bigint() - t0) / 1e9;
      const n = countTokens(encs);
      if (n !== tokens) throw new Error('token count changed between passes');
      best = Math.min(best, dt);
    }
    results.push({ mode: 'encodeBatch', best });
  }
  {
    let best = Infinity;
    for (let r = 0; r < reps; r++) {
      let n = 0;
      const t0 = process.hrtime.bigint();
      for (const t of texts) {
        const e = await tok.encode(t, null, OPTS);
        n += e.getIds().length;
      }
      const dt = Number(process.hrtime.bigint() - t0) / 1e9;
      if (n !== tokens) throw new Error('token count mismatch encode vs encodeBatch');
      best = Math.min(best, dt);
    }
    results.push({ mode: 'encode_loop', best });
  }

  const [batch, loop] = results;
  const rate = (r) => ({ seconds: +r.best.toFixed(6), tokens_per_s: Math.round(tokens / r.best), mb_per_s: +(bytes / r.best / 1e6).toFixed(3) });
  // One JSON line: top-level fields describe the primary mode (encodeBatch);
  // the per-string encode loop is reported under "encode_loop".
  console.log(JSON.stringify({
    tokens,
    ...rate(batch),
    mode: 'encodeBatch',
    encode_loop: rate(loop),
    strings: texts.length,
    bytes,
    reps,
    rayon_threads: process.env.RAYON_NUM_THREADS,
    reference: '@anush008/tokenizers@' + ref.version,
  }));
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
