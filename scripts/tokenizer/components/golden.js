#!/usr/bin/env node
'use strict';
// Golden files for the normalizers, pre-tokenizers and decoders beyond the
// hub's XLM-R and BERT pipelines: for each configuration below, a
// tokenizer.json (the trained Unigram model of ../unigram, plain or with
// byte fallback, or the BERT-layout WordPiece vocabulary, with the
// configuration's components) and the Rust reference's (tokenizers 0.22.2)
// output on every corpus string: ids without and with special tokens, the
// decoded text, the normalizer's output and the pre-tokenizer's pieces of it.
//
// usage: node golden.js [-update]
//   -update  rewrite tokenizer/testdata/components/<name>.json and golden-<name>.jsonl
//   without: compare them with the reference and exit 1 on any difference
process.env.TOKENIZERS_PARALLELISM = 'false';
const fs = require('fs');
const path = require('path');
const { refDir, REF_PACKAGE } = require('../ref');
const { Tokenizer } = require(path.join(refDir(), 'node_modules', ...REF_PACKAGE.split('/')));

const repo = path.resolve(__dirname, '../../..');
const td = path.join(repo, 'tokenizer', 'testdata');
const out = path.join(td, 'components');
const update = process.argv.includes('-update');

// The corpus: every case that separates the components' rules, then a
// deterministic mix of them.
const BASE = [
  '', ' ', '   ', 'a', 'hello world', '  leading and trailing  ', 'runs   of \t\n spaces\u3000and\u00a0nbsp',
  'Hello, World! How are you?', 'don\'t stop-believing... (really) [ok] {x} <tag> #1 @me 50% a&b',
  'numbers 123 4.56 7,890 1e10 ١٢٣ ۴۵۶ १२३ ௧௨ ½ ² Ⅻ ⑦', 'abc123def 00x9 x1y2z3',
  'Café naïve résumé ÉCOLE Über straße façade coöperate', 'e\u0301 a\u0308 n\u0303 A\u030a \u212b',
  'q\u0307\u0323 q\u0323\u0307 \u1e0b\u0323 \u1e0d\u0307 a\u0345\u0301 a\u0301\u0345',
  'ﬁne ﬂow ﬀ ﬃ ℌ ℍ ㎏ ㈱ ⅷ ① ™ … ¼', 'ＦＵＬＬ ｗｉｄｔｈ ＡＢＣ １２３ ！？',
  '한국어 각 \u1100\u1161\u11a8 한\u0301', '我们今天去公园散步，天气很好。', '東京は日本の首都です。カタカナとひらがな ｶﾀｶﾅ ｶﾞ',
  'hello\nनमस्ते दुनिया क्षि', 'مرحبا بالعالم\nالسَّلَامُ عَلَيْكُمْ', 'שָׁלוֹם', 'ΣΊΣΥΦΟΣ Σίσυφος ς',
  'İstanbul ıi I İ ǅ ǈ Ǆ ß ẞ ﬀ', 'ǰ ǰ̌ ΐ', 'emoji 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️ 🫠',
  'control\u0001chars\u0007here\u007f and \u200b zero \ufeff bom \u00ad soft', 'tab\tsep\rcr\nlf\u2028ls\u2029ps\u0085nel',
  'a\u0000b', '\ufffd\ufffd', '\ud800 lone \udfff surrogates', '\u0378\u0379 unassigned \ue000 private \U0010fffd',
  // Characters the reference's tables predate (Unicode 13-17).
  'arabic pepet \u0897 x\u0897\u0301 garay \ud803\udd69 tulu \ud804\udf82\ud804\udfc9 \ud804\udf83',
  'compat \ua7f2 \ua7f3 \ud838\udc30 \ud838\udc31 \ud81b\udd68 kirat \ud81b\udd67\ud81b\udd67',
  'dives akuru \ud806\udd35\ud806\udd30 \ud806\udd38 todhri \ud801\uddd2\u0307 \ud801\uddc9',
  'new punct \u2e52 \u2e5d \u061d \u0c77 \ud805\ude60 \ud83a\udd5e', 'new letters \u088f \ua7ce \ud802\udd40 \u1acf',
  'hyphen-ated and under_score and dots.in.words and a--b__c..d', 'x<mask>y', ' <mask> spaced <mask>', '<s>inside</s>',
  '<0x41> literal byte piece <0xe3>', 'mixed ĲĳǄǅǆ Ǳ ǲ ǳ ﬆ', 'ℂℕℙℚℝℤ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕞𝕒𝕥𝕙',
  '3.14-2.71=0.43 +1 (555) 123-4567 $100 €5 £3 ¥7', 'a.b,c;d:e!f?g', '..., ;;; !!!', '—–-‒― ‘’“”«»„',
  'supercalifragilisticexpialidocious pneumonoultramicroscopicsilicovolcanoconiosis',
];

function corpus() {
  let seed = 7;
  const rnd = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x7fffffff; };
  const chars = [...BASE.join('')];
  const outs = [...BASE];
  for (let i = 0; i < 150; i++) {
    const n = 1 + Math.floor(rnd() * 30);
    let s = '';
    for (let k = 0; k < n; k++) s += chars[Math.floor(rnd() * chars.length)];
    outs.push(s);
  }
  for (let i = 0; i < 50; i++) {
    outs.push(BASE[Math.floor(rnd() * BASE.length)] + [' ', '  ', '\n', '', '\u3000'][i % 5] + BASE[Math.floor(rnd() * BASE.length)]);
  }
  outs.push(BASE.join(' ').repeat(3));
  return outs;
}

const ms = (scheme, split) => ({ type: 'Metaspace', replacement: '▁', prepend_scheme: scheme, split: split === undefined ? true : split });
const msDec = (scheme) => ({ type: 'Metaspace', replacement: '▁', prepend_scheme: scheme, split: true });
const seq = (...n) => ({ type: 'Sequence', normalizers: n });
const pseq = (...p) => ({ type: 'Sequence', pretokenizers: p });
const split = (pattern, behavior, invert) => ({ type: 'Split', pattern, behavior, invert: !!invert });

// name: [model, normalizer, pre_tokenizer, decoder]
const CONFIGS = {
  'nfc': ['unigram-bf', { type: 'NFC' }, ms('always'), msDec('always')],
  'nfd': ['unigram-bf', { type: 'NFD' }, ms('always'), msDec('always')],
  'nfkc': ['unigram-bf', { type: 'NFKC' }, ms('always'), msDec('always')],
  'nfkd': ['unigram-bf', { type: 'NFKD' }, ms('always'), msDec('always')],
  'lowercase': ['unigram-bf', seq({ type: 'NFKC' }, { type: 'Lowercase' }), ms('always'), msDec('always')],
  'strip-accents': ['unigram-bf', seq({ type: 'NFD' }, { type: 'StripAccents' }, { type: 'NFC' }), ms('always'), msDec('always')],
  'prepend': ['unigram', seq({ type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }), null, null],
  'nested': ['unigram-bf', seq(seq({ type: 'NFKD' }, { type: 'Lowercase' }), seq({ type: 'StripAccents' }, { type: 'Strip', strip_left: true, strip_right: true }),
    { type: 'Replace', pattern: { Regex: ' {2,}|\\t+' }, content: ' ' }), ms('always'), msDec('always')],
  'byte-fallback': ['unigram-bf', null, ms('always'), { type: 'Sequence', decoders: [{ type: 'ByteFallback' }, msDec('always'), { type: 'Fuse' }] }],
  'decoder-llama': ['unigram-bf', seq({ type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }), null,
    { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] }],
  'metaspace-first': ['unigram', null, ms('first'), msDec('first')],
  'metaspace-never': ['unigram', null, ms('never'), msDec('never')],
  'metaspace-nosplit': ['unigram', null, ms('always', false), msDec('always')],
  'whitespace': ['wordpiece', { type: 'Lowercase' }, { type: 'Whitespace' }, { type: 'WordPiece', prefix: '##', cleanup: true }],
  'whitespace-split': ['unigram', null, pseq({ type: 'WhitespaceSplit' }, ms('always')), msDec('always')],
  'punctuation': ['wordpiece', seq({ type: 'NFD' }, { type: 'StripAccents' }, { type: 'Lowercase' }), pseq({ type: 'WhitespaceSplit' }, { type: 'Punctuation' }), { type: 'WordPiece', prefix: '##', cleanup: false }],
  'punctuation-contiguous': ['unigram', null, pseq(ms('always'), { type: 'Punctuation', behavior: 'Contiguous' }), msDec('always')],
  'digits': ['unigram', null, pseq(ms('always'), { type: 'Digits', individual_digits: true }), msDec('always')],
  'digits-grouped': ['wordpiece', { type: 'Lowercase' }, pseq({ type: 'Whitespace' }, { type: 'Digits', individual_digits: false }), null],
  'split-removed': ['unigram', null, pseq(split({ String: ' ' }, 'Removed'), ms('always')), msDec('always')],
  'split-isolated': ['unigram', null, pseq(ms('always'), split({ Regex: '[0-9]+|[.,;:!?]' }, 'Isolated')), msDec('always')],
  'split-previous': ['unigram', null, pseq(ms('always'), split({ String: '-' }, 'MergedWithPrevious')), msDec('always')],
  'split-next': ['unigram', null, pseq(ms('always'), split({ Regex: '(?:ab|a)c?|\\.' }, 'MergedWithNext')), msDec('always')],
  'split-contiguous': ['unigram', null, pseq(ms('always'), split({ Regex: '[aeiou]' }, 'Contiguous')), msDec('always')],
  'split-invert': ['wordpiece', { type: 'Lowercase' }, split({ Regex: '[a-z]+|[^a-z ]' }, 'Removed', true), null],
  'split-invert-isolated': ['unigram', null, pseq(ms('always'), split({ String: '▁' }, 'Isolated', true)), msDec('always')],
};

function model(kind) {
  if (kind === 'wordpiece') {
    const j = JSON.parse(fs.readFileSync(path.join(td, 'wordpiece', 'bert-uncased.json'), 'utf8'));
    return j;
  }
  const j = JSON.parse(fs.readFileSync(path.join(td, 'unigram', 'xlmr-current.json'), 'utf8'));
  if (kind === 'unigram-bf') {
    // SentencePiece's byte pieces (score 0) after <mask>.
    for (let b = 0; b < 256; b++) j.model.vocab.push([`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`, 0]);
    j.model.byte_fallback = true;
  }
  return j;
}

async function main() {
  const texts = corpus();
  fs.mkdirSync(out, { recursive: true });
  let differ = 0;
  for (const [name, [kind, normalizer, pre, decoder]] of Object.entries(CONFIGS)) {
    const j = model(kind);
    j.normalizer = normalizer;
    j.pre_tokenizer = pre;
    j.decoder = decoder;
    const file = JSON.stringify(j);
    const tok = Tokenizer.fromString(file);
    const norm = tok.getNormalizer();
    const pt = tok.getPreTokenizer();
    const lines = [];
    for (const text of texts) {
      const plain = await tok.encode(text, null, { addSpecialTokens: false });
      const spec = await tok.encode(text, null, { addSpecialTokens: true });
      const ids = Array.from(plain.getIds());
      const normalized = norm ? norm.normalizeString(text) : text;
      const rec = { text, ids, special: Array.from(spec.getIds()), decoded: await tok.decode(ids, false), normalized };
      if (pt) rec.pre = pt.preTokenizeString(normalized).map((p) => p[0]);
      lines.push(JSON.stringify(rec));
    }
    const golden = lines.join('\n') + '\n';
    const jf = path.join(out, `${name}.json`), gf = path.join(out, `golden-${name}.jsonl`);
    if (update) {
      fs.writeFileSync(jf, file + '\n');
      fs.writeFileSync(gf, golden);
      console.error(`${name}: ${lines.length} strings`);
    } else if (!fs.existsSync(jf) || fs.readFileSync(jf, 'utf8') !== file + '\n' || fs.readFileSync(gf, 'utf8') !== golden) {
      console.error(`${name}: committed files differ from the reference's output (run with -update)`);
      differ++;
    }
  }
  if (!update) console.error(differ ? `${differ} configurations differ` : 'all golden files equal the reference');
  process.exit(differ ? 1 : 0);
}
main().catch((e) => { console.error(e); process.exit(1); });
