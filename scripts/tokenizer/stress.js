'use strict';
// Differential stress corpus: N random strings (seeded) built from characters
// at the edges of the split pattern (every Unicode White_Space character,
// ASCII separators U+001C-001F, apostrophes before s/S/ſ/K, letters, digits,
// marks, CR/LF) plus random code points, encoded by the reference. The output
// has golden.jsonl's shape, so the Go golden test can check it:
//   node scripts/tokenizer/stress.js 20000 7 > /tmp/stress.jsonl
//   go test ./tokenizer -run GoldenParity -golden /tmp/stress.jsonl
// Not committed: it is a way to look for disagreements beyond the corpus.
const { loadReference } = require('./ref');

const n = Number(process.argv[2] || 20000);
let seed = Number(process.argv[3] || 1) >>> 0;
function rnd() { // mulberry32
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (a) => a[Math.floor(rnd() * a.length)];
const edge = [
  '\t', '\n', '\u000b', '\u000c', '\r', ' ', '\u0085', '\u00a0', '\u1680', '\u2000', '\u2005', '\u200a',
  '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\u180e', '\u200b', '\ufeff', '\u001c', '\u001d', '\u001e',
  '\u001f', "'", "'", 's', 'S', '\u017f', 'K', '\u212a', 't', 'T', 're', 'VE', 'll', 'LL', 'd', 'm', 'a', 'Z',
  '\u00e9', 'e\u0301', '\u0301', '\u0308', '1', '9', '\u0663', '\u2167', '\u00bd', '\u4e2d', '\u6587', '\u3042',
  '\u0915', '\u093f', '\u0627', '\ud83d\ude00', '\u200d', '\ud83d\udc69', '.', ',', '!', '(', '_', '-', '\u2019',
  '<|im_start|>', '<|im_end|>', '<think>', '<|', '|>', '\r\n', '  ', '\n\n', '0.5',
];
function randomCp() {
  for (;;) {
    const r = rnd();
    const c = r < 0.5 ? Math.floor(rnd() * 0x3000) : r < 0.8 ? Math.floor(rnd() * 0x10000) : Math.floor(rnd() * 0x110000);
    if (c < 0xd800 || c > 0xdfff) return String.fromCodePoint(c);
  }
}
(async () => {
  const { tokenizer } = loadReference();
  const seen = new Set();
  const out = [];
  while (out.length < n) {
    const len = 1 + Math.floor(rnd() * 24);
    let s = '';
    for (let i = 0; i < len; i++) s += rnd() < 0.75 ? pick(edge) : randomCp();
    if (seen.has(s)) continue;
    seen.add(s);
    out.push(s);
  }
  const encs = await tokenizer.encodeBatch(out, { addSpecialTokens: false });
  const lines = [];
  for (let i = 0; i < out.length; i++) {
    const ids = Array.from(encs[i].getIds());
    const decoded = await tokenizer.decode(ids, false);
    lines.push(JSON.stringify({ text: out[i], ids, decoded }));
  }
  process.stdout.write(lines.join('\n') + '\n');
})().catch((e) => { console.error(e); process.exit(1); });
