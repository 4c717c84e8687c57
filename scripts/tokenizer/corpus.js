'use strict';
// Deterministic tokenizer parity corpus for the Qwen3 BPE tokenizer.
//
// buildCorpus() returns an array of distinct strings (corpus order is stable).
// buildCorpusWithCategories() returns [{text, category}] in the same order.
// Everything is generated from a seeded PRNG (mulberry32); Math.random is never
// used, so the output is byte-identical across runs and machines.
//
// All strings are well-formed Unicode (no lone surrogates) so that they
// round-trip through UTF-8 / JSON into Go.

const SEED = 0x5eed2024;

function mulberry32(a) {
  return function () {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function makeRng(seed) {
  const r = mulberry32(seed);
  const rng = {
    float: r,
    int: (lo, hi) => lo + Math.floor(r() * (hi - lo + 1)), // inclusive
    pick: (arr) => arr[Math.floor(r() * arr.length)],
    chance: (p) => r() < p,
  };
  return rng;
}

const cp = (n) => String.fromCodePoint(n);

function isWellFormed(s) {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (!(d >= 0xdc00 && d <= 0xdfff)) return false;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------
// Raw material
// ---------------------------------------------------------------------------

const EN_SENTENCES = [
  'The quick brown fox jumps over the lazy dog.',
  'Hello, world!',
  'hello world',
  'HELLO WORLD',
  'It was the best of times, it was the worst of times.',
  "I don't think that's what she meant, but we'll see.",
  'Tokenization is the process of splitting text into smaller units called tokens.',
  'A reranker scores the relevance of each document with respect to a query.',
  'She sells sea shells by the sea shore.',
  'Wait... what?! Are you sure??',
  'The meeting is scheduled for 3:30 p.m. on Tuesday, March 4th.',
  'e.g., i.e., etc., vs. and Mr. Smith went to Washington.',
  'Email me at john.doe@example.com or visit https://example.org/path?q=1&r=2#frag.',
  'Supercalifragilisticexpialidocious is a very long word.',
  'Pneumonoultramicroscopicsilicovolcanoconiosis',
  'internationalization localization globalization',
  'The U.S.A. and the U.K. signed the treaty in 1945.',
  '"Quoted text," she said, \'with single quotes too.\'',
  'Semi-colons; colons: dashes - and em-dashes \u2014 and en-dashes \u2013 oh my.',
  'Curly quotes \u201clike these\u201d and \u2018these\u2019 are common in prose.',
  'CamelCaseIdentifiersAndsnake_case_identifiers and kebab-case-ones.',
  'ALL CAPS SENTENCE WITH SOME lower case WORDS.',
  'a b c d e f g h i j k l m n o p q r s t u v w x y z',
  'A B C D E F G H I J K L M N O P Q R S T U V W X Y Z',
  '#hashtag @mention $dollar %percent ^caret &ampersand *star',
  '(parentheses) [brackets] {braces} <angles>',
  '~tilde `backtick` |pipe| \\backslash/ slash',
  'Question? Exclamation! Interrobang\u203d Ellipsis\u2026',
  'The caf\u00e9 served cr\u00e8me br\u00fbl\u00e9e and a na\u00efve pi\u00f1a colada.',
  'Dr. Who?',
  'OK',
  'ok.',
  'x',
  'I',
  "I'm",
  'antidisestablishmentarianism',
  "rock 'n' roll",
  "the '90s were great",
  "o'clock",
  "O'Neill's dog",
  "y'all'd've",
];

const EN_WORDS = (
  'the of and to in is was that for it with as his on be at by had are but from or have an they which ' +
  'one you were her all she there would their we him been has when who will more no if out so said what ' +
  'up its about into than them can only other new some could time these two may then do first any my now ' +
  'such like our over man me even most made after also did many before must through back years where much ' +
  'your way well down should because each just those people how too little state good very make world still ' +
  'own see men work long get here between both life being under never day same another know while last ' +
  'might us great old year off come since against go came right used take three support group memory ' +
  'yesterday painting camping adoption career counseling transgender parade beach sunset hiking guitar ' +
  'violin pottery festival grandmother birthday conference library museum recipe garden marathon'
).split(' ');

const ZH_SENTENCES = [
  '\u4f60\u597d\uff0c\u4e16\u754c\uff01',
  '\u4eca\u5929\u5929\u6c14\u5f88\u597d\uff0c\u6211\u4eec\u53bb\u516c\u56ed\u6563\u6b65\u5427\u3002',
  '\u673a\u5668\u5b66\u4e60\u662f\u4eba\u5de5\u667a\u80fd\u7684\u4e00\u4e2a\u5206\u652f\u3002',
  '\u8fd9\u4e2a\u95ee\u9898\u7684\u7b54\u6848\u53ea\u80fd\u662f\u201c\u662f\u201d\u6216\u201c\u5426\u201d\u3002',
  '\u6211\u6628\u5929\u53bb\u4e86\u56fe\u4e66\u9986\uff0c\u501f\u4e86\u4e09\u672c\u4e66\u3002',
  '\u5317\u4eac\u662f\u4e2d\u534e\u4eba\u6c11\u5171\u548c\u56fd\u7684\u9996\u90fd\u3002',
  '\u5b66\u800c\u65f6\u4e60\u4e4b\uff0c\u4e0d\u4ea6\u8bf4\u4e4e\uff1f',
  '\u5e8a\u524d\u660e\u6708\u5149\uff0c\u7591\u662f\u5730\u4e0a\u971c\u3002\u4e3e\u5934\u671b\u660e\u6708\uff0c\u4f4e\u5934\u601d\u6545\u4e61\u3002',
  '\u8bf7\u6839\u636e\u67e5\u8be2\u5185\u5bb9\u5224\u65ad\u6587\u6863\u662f\u5426\u76f8\u5173\u3002',
  '\u5979\u4e0a\u5468\u672b\u53c2\u52a0\u4e86\u4e00\u4e2a\u7ed8\u753b\u5de5\u4f5c\u574a\uff0c\u753b\u4e86\u4e00\u5e45\u65e5\u843d\u3002',
  '\u7e41\u9ad4\u4e2d\u6587\u8207\u7c21\u9ad4\u4e2d\u6587\u4e0d\u540c\u3002',
  '\u3010\u516c\u544a\u3011\u300a\u7ea2\u697c\u68a6\u300b\u2014\u2014\u66f9\u96ea\u82b9\u8457',
  '\u4e00\u4e8c\u4e09\u56db\u4e94\u516d\u4e03\u516b\u4e5d\u5341\u767e\u5343\u4e07\u4ebf',
  '\u9f98\u9f49\u9750\u9f96\u9a6b\u5b5b\u7c7c',
  '\ud840\udc00\ud840\udc01\ud869\udede \u6269\u5c55B\u533a\u6c49\u5b57',
];

const ZH_PHRASES = [
  '\u6211\u4eec', '\u4eca\u5929', '\u660e\u5929', '\u6628\u5929', '\u670b\u53cb', '\u5de5\u4f5c', '\u5b66\u4e60',
  '\u7535\u8111', '\u624b\u673a', '\u6587\u6863', '\u67e5\u8be2', '\u76f8\u5173', '\u6a21\u578b', '\u8bad\u7ec3',
  '\u6570\u636e', '\u5bb6\u5ead', '\u65c5\u884c', '\u97f3\u4e50', '\u7ed8\u753b', '\u670d\u52a1\u5668', '\u7f51\u7edc',
  '\u7684', '\u4e86', '\u662f', '\u5728', '\u6709', '\u548c', '\u5417', '\u5462', '\uff0c', '\u3002', '\uff01', '\uff1f', '\u3001',
];

const MIXED_ZH_EN = [
  '\u6211\u5728\u7528Python\u5199\u4e00\u4e2aHTTP server\u3002',
  'GPU\u663e\u5b58\u4e0d\u591f\u4e86\uff0c\u9700\u8981\u628abatch size\u8c03\u5c0f\u4e00\u70b9\u3002',
  'Qwen3-Reranker-0.6B\u662f\u4e00\u4e2a\u91cd\u6392\u5e8f\u6a21\u578b\u3002',
  '\u8fd9\u4e2aAPI\u8fd4\u56de\u7684JSON\u683c\u5f0f\u4e0d\u5bf9\uff0c\u8bf7\u68c0\u67e5\u4e00\u4e0bfield\u540d\u79f0\u3002',
  'iPhone 15 Pro Max\u7684\u4ef7\u683c\u662f9999\u5143\u3002',
  '\u6211\u4eec\u660e\u5929meeting\u8ba8\u8bbaQ3\u7684roadmap\u5427',
  'Hello\u4f60\u597dWorld\u4e16\u754c',
  'Linux\u5185\u6838\u7248\u672c6.8.0-generic',
  '\u4ed6\u8bf4\uff1a"OK, let\'s go!"\u7136\u540e\u5c31\u8d70\u4e86\u3002',
];

const CODE_SNIPPETS = [
  'def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n',
  'import numpy as np\n\nclass Model:\n    def __init__(self, dim: int = 128) -> None:\n        self.w = np.zeros((dim, dim))\n\n    def __call__(self, x):\n        return x @ self.w\n',
  'for i in range(10):\n\tprint(i)\n\tif i % 2 == 0:\n\t\tcontinue\n',
  'if __name__ == "__main__":\n    main()\n',
  'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\nfunc main() {\n\tif len(os.Args) < 2 {\n\t\tfmt.Fprintln(os.Stderr, "usage: rerankd <cmd>")\n\t\tos.Exit(2)\n\t}\n\tfmt.Println("hello")\n}\n',
  'type Tokenizer struct {\n\tvocab  map[string]int32\n\tmerges map[[2]int32]int32\n}\n',
  'func (t *Tokenizer) Encode(s string) ([]int32, error) {\n\treturn nil, errors.New("not implemented")\n}',
  '{"model": "qwen3-reranker", "query": "what is BPE?", "documents": ["a", "b"], "top_n": 3}',
  '{\n  "name": "rerankd",\n  "version": "0.1.0",\n  "nested": {\n    "array": [1, 2.5, -3e10, true, false, null],\n    "empty": {}\n  }\n}',
  '[{"id":1,"score":0.9876},{"id":2,"score":0.0123}]',
  '#include <stdio.h>\nint main(void) {\n    printf("%d\\n", 42);\n    return 0;\n}\n',
  'SELECT id, name FROM users WHERE age >= 18 AND name LIKE \'%son\' ORDER BY id DESC;',
  '<div class="container"><p id=\'x\'>Hello &amp; goodbye</p></div>',
  'const f = (a, b) => a ?? b; // nullish\nlet x = `template ${f(1, 2)}`;',
  '#!/usr/bin/env bash\nset -euo pipefail\nfor f in *.txt; do\n  echo "$f"\ndone\n',
  'fn main() {\n    let v: Vec<u32> = (0..10).map(|x| x * x).collect();\n    println!("{:?}", v);\n}\n',
  '    indented with four spaces\n        and eight\n            and twelve\n',
  '\tone tab\n\t\ttwo tabs\n\t\t\tthree tabs\n\t \t mixed tab space\n',
  'x=1;y=2;z=x+y*3/4-5%6**7//8',
  'a == b != c <= d >= e && f || !g',
  '->  =>  ::  ...  ..  ++  --  +=  -=  <<=  >>=  ===  !==',
  'key: value\nlist:\n  - item1\n  - item2\nnested:\n  deep:\n    deeper: true\n',
  '<?xml version="1.0" encoding="UTF-8"?>\n<root attr="1"><child/></root>',
  '$ git commit -m "fix: handle \\r\\n line endings"\n',
  'C:\\Users\\test\\Documents\\file.txt',
  '/usr/local/bin/python3.11 -m pip install --upgrade pip',
  '0x1F600 0b1010 0o777 1e-9 3.14159f 100_000_000',
];

const EMOJI = [
  '\u{1F600}', '\u{1F602}', '\u{1F923}', '\u{2764}\u{FE0F}', '\u{2764}', '\u{1F44D}', '\u{1F44D}\u{1F3FB}',
  '\u{1F44D}\u{1F3FC}', '\u{1F44D}\u{1F3FD}', '\u{1F44D}\u{1F3FE}', '\u{1F44D}\u{1F3FF}',
  '\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}\u{200D}\u{1F466}', // family
  '\u{1F469}\u{200D}\u{1F4BB}', // woman technologist
  '\u{1F3F3}\u{FE0F}\u{200D}\u{1F308}', // rainbow flag
  '\u{1F3F3}\u{FE0F}\u{200D}\u{26A7}\u{FE0F}', // transgender flag
  '\u{1F9D1}\u{1F3FD}\u{200D}\u{1F91D}\u{200D}\u{1F9D1}\u{1F3FB}', // people holding hands, tones
  '\u{1F469}\u{1F3FE}\u{200D}\u{2764}\u{FE0F}\u{200D}\u{1F48B}\u{200D}\u{1F468}\u{1F3FB}',
  '\u{1F1FA}\u{1F1F8}', '\u{1F1E8}\u{1F1F3}', '\u{1F1EF}\u{1F1F5}', '\u{1F1E9}\u{1F1EA}', '\u{1F1EB}\u{1F1F7}',
  '\u{1F1FA}\u{1F1E6}', '\u{1F1E7}\u{1F1F7}', '\u{1F1EE}\u{1F1F3}',
  '\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}', // England tag sequence
  '1\u{FE0F}\u{20E3}', '#\u{FE0F}\u{20E3}', '*\u{20E3}',
  '\u{263A}\u{FE0E}', '\u{263A}\u{FE0F}', '\u{00A9}\u{FE0F}', '\u{2122}',
  '\u{1F436}', '\u{1F431}', '\u{1F984}', '\u{1F355}', '\u{1F680}', '\u{1F30D}', '\u{1F525}', '\u{1F4AF}',
  '\u{1FAE0}', '\u{1FAF6}\u{1F3FC}', '\u{1F972}', '\u{1F9CB}', '\u{1F47B}', '\u{1F916}', '\u{1F44B}\u{1F3FF}',
  '\u{1F9D9}\u{200D}\u{2640}\u{FE0F}', '\u{1F3C3}\u{1F3FD}\u{200D}\u{2642}\u{FE0F}\u{200D}\u{27A1}\u{FE0F}',
  '\u{1F415}\u{200D}\u{1F9BA}', '\u{1F408}\u{200D}\u{2B1B}', '\u{1F43B}\u{200D}\u{2744}\u{FE0F}',
];

const SCRIPTS = {
  hindi: [
    '\u0928\u092e\u0938\u094d\u0924\u0947, \u0906\u092a \u0915\u0948\u0938\u0947 \u0939\u0948\u0902?',
    '\u092d\u093e\u0930\u0924 \u090f\u0915 \u0935\u093f\u0936\u093e\u0932 \u0926\u0947\u0936 \u0939\u0948\u0964',
    '\u092e\u0941\u091d\u0947 \u0939\u093f\u0902\u0926\u0940 \u092a\u0922\u093c\u0928\u093e \u092a\u0938\u0902\u0926 \u0939\u0948\u0964',
    '\u0915\u094d\u0937\u0924\u094d\u0930\u093f\u092f \u0924\u094d\u0930\u093f\u0936\u0942\u0932 \u091c\u094d\u091e\u093e\u0928 \u0936\u094d\u0930\u0940',
    '\u0967\u0968\u0969\u096a\u096b\u096c\u096d\u096e\u096f\u0966',
  ],
  arabic: [
    '\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645',
    '\u0627\u0644\u0644\u063a\u0629 \u0627\u0644\u0639\u0631\u0628\u064a\u0629 \u062c\u0645\u064a\u0644\u0629 \u062c\u062f\u0627\u064b.',
    '\u0628\u0650\u0633\u0652\u0645\u0650 \u0671\u0644\u0644\u064e\u0651\u0670\u0647\u0650',
    '\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669\u0660 \u06f1\u06f2\u06f3',
    '\u0647\u0644 \u0630\u0647\u0628\u062a \u0625\u0644\u0649 \u0627\u0644\u0633\u0648\u0642 \u0623\u0645\u0633\u061f',
  ],
  hebrew: [
    '\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd',
    '\u05d1\u05bc\u05b0\u05e8\u05b5\u05d0\u05e9\u05b4\u05c1\u05d9\u05ea \u05d1\u05bc\u05b8\u05e8\u05b8\u05d0',
    '\u05d0\u05e0\u05d9 \u05d0\u05d5\u05d4\u05d1 \u05dc\u05e7\u05e8\u05d5\u05d0 \u05e1\u05e4\u05e8\u05d9\u05dd.',
    '\u05e2\u05d1\u05e8\u05d9\u05ea \u05d5-English \u05d1\u05d0\u05d5\u05ea\u05d4 \u05e9\u05d5\u05e8\u05d4',
  ],
  thai: [
    '\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35\u0e04\u0e23\u0e31\u0e1a',
    '\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22\u0e44\u0e21\u0e48\u0e21\u0e35\u0e01\u0e32\u0e23\u0e40\u0e27\u0e49\u0e19\u0e27\u0e23\u0e23\u0e04\u0e23\u0e30\u0e2b\u0e27\u0e48\u0e32\u0e07\u0e04\u0e33',
    '\u0e09\u0e31\u0e19\u0e0a\u0e2d\u0e1a\u0e01\u0e34\u0e19\u0e2d\u0e32\u0e2b\u0e32\u0e23\u0e44\u0e17\u0e22 \u0e51\u0e52\u0e53',
  ],
  japanese: [
    '\u3053\u3093\u306b\u3061\u306f\u3001\u4e16\u754c\uff01',
    '\u4eca\u65e5\u306f\u3044\u3044\u5929\u6c17\u3067\u3059\u306d\u3002',
    '\u30ab\u30bf\u30ab\u30ca\u3068\u3072\u3089\u304c\u306a\u3068\u6f22\u5b57\u3092\u6df7\u305c\u3066\u66f8\u304d\u307e\u3059\u3002',
    '\uff8a\uff9d\uff76\uff78\uff76\uff80\uff76\uff85 \uff21\uff22\uff23\uff11\uff12\uff13',
    '\u6771\u4eac\u90fd\u6e0b\u8c37\u533a\u3067\u30e9\u30fc\u30e1\u30f3\u3092\u98df\u3079\u307e\u3057\u305f\u3002',
    '\u30ac\u30d1\u30d3\u30d7\u30d9\u30dd \u30ab\u3099\u30cf\u309a',
  ],
  korean: [
    '\uc548\ub155\ud558\uc138\uc694, \uc138\uacc4!',
    '\ud55c\uad6d\uc5b4\ub294 \ud55c\uae00\ub85c \uc501\ub2c8\ub2e4.',
    '\uc800\ub294 \uc5b4\uc81c \ub3c4\uc11c\uad00\uc5d0 \uac14\uc5b4\uc694.',
    '\ud790\ub9c1 \ud83c\udf3f \uce74\ud398\uc5d0\uc11c \ucee4\ud53c \ud55c \uc794',
  ],
  cyrillic: [
    '\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440!',
    '\u0421\u044a\u0435\u0448\u044c \u0436\u0435 \u0435\u0449\u0451 \u044d\u0442\u0438\u0445 \u043c\u044f\u0433\u043a\u0438\u0445 \u0444\u0440\u0430\u043d\u0446\u0443\u0437\u0441\u043a\u0438\u0445 \u0431\u0443\u043b\u043e\u043a, \u0434\u0430 \u0432\u044b\u043f\u0435\u0439 \u0447\u0430\u044e.',
    '\u041c\u041e\u0421\u041a\u0412\u0410 \u2014 \u0441\u0442\u043e\u043b\u0438\u0446\u0430 \u0420\u043e\u0441\u0441\u0438\u0438.',
    '\u0423\u043a\u0440\u0430\u0457\u043d\u0441\u044c\u043a\u0430 \u043c\u043e\u0432\u0430: \u0457\u0436\u0430\u043a, \u0491\u0430\u043d\u043e\u043a.',
    '\u0439\u0446\u0443\u043a\u0435\u043d \u0419\u0426\u0423\u041a\u0415\u041d',
  ],
  greek: [
    '\u0393\u03b5\u03b9\u03ac \u03c3\u03bf\u03c5 \u039a\u03cc\u03c3\u03bc\u03b5',
    '\u039e\u03b5\u03c3\u03ba\u03b5\u03c0\u03ac\u03b6\u03c9 \u03c4\u1f74\u03bd \u03c8\u03c5\u03c7\u03bf\u03c6\u03b8\u03cc\u03c1\u03b1 \u03b2\u03b4\u03b5\u03bb\u03c5\u03b3\u03bc\u03af\u03b1.',
    '\u03b1\u03b2\u03b3\u03b4\u03b5\u03b6\u03b7\u03b8\u03b9\u03ba\u03bb\u03bc\u03bd\u03be\u03bf\u03c0\u03c1\u03c3\u03c2\u03c4\u03c5\u03c6\u03c7\u03c8\u03c9',
    '\u0391\u0392\u0393\u0394 \u1f08\u03b8\u1fc6\u03bd\u03b1\u03b9 \u1f41 \u1f00\u03bd\u03ae\u03c1',
    '\u03a3\u03bf\u03c6\u03af\u03b1; \u03bd\u03b1\u03af\u00b7 \u03c0\u03b9 = 3,14',
  ],
};

const UNICODE_SPACES = [
  '\u00A0', '\u1680', '\u2000', '\u2001', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006', '\u2007',
  '\u2008', '\u2009', '\u200A', '\u2028', '\u2029', '\u202F', '\u205F', '\u3000', '\u0085', '\u000B',
  '\u000C', '\u001C', '\u001D', '\u001E', '\u001F', '\uFEFF', '\u200B', '\u200C', '\u200D', '\u2060',
  '\u180E', '\u00AD',
];
const ASCII_SPACES = [' ', '\t', '\n', '\r', '\r\n', '\n\n', '\n\n\n', ' \n', '\n ', '\t\n', ' \t ', '\r\n\r\n'];

const SPECIAL_TOKENS = [
  '<|endoftext|>', '<|im_start|>', '<|im_end|>', '<|object_ref_start|>', '<|object_ref_end|>',
  '<|box_start|>', '<|box_end|>', '<|quad_start|>', '<|quad_end|>', '<|vision_start|>', '<|vision_end|>',
  '<|vision_pad|>', '<|image_pad|>', '<|video_pad|>', '<tool_call>', '</tool_call>', '<|fim_prefix|>',
  '<|fim_middle|>', '<|fim_suffix|>', '<|fim_pad|>', '<|repo_name|>', '<|file_sep|>', '<tool_response>',
  '</tool_response>', '<think>', '</think>',
];
const PARTIAL_SPECIALS = [
  '<|im_start|', '|im_start|>', '<|im_start', 'im_start|>', '<|im_end', '<|im_end|', '<|endoftext',
  '<|endoftext|', '<think', 'think>', '</think', '<think >', '< think>', '<THINK>', '<|IM_START|>',
  '<|im_start |>', '<||>', '<|>', '<|', '|>', '</', '<|im_sta', '<|im_start||>', '<<|im_start|>>',
  '<|im_start|im_end|>', '<|endof text|>', '</ think>',
];

const COMBINING = [
  ['\u00e9', 'e\u0301'], ['\u00c5', 'A\u030a'], ['\u00f1', 'n\u0303'], ['\u00fc', 'u\u0308'],
  ['\u1e69', 's\u0323\u0307'], ['\u1e69', 's\u0307\u0323'], ['\u01d6', 'u\u0308\u0304'],
  ['\u1ec7', 'e\u0323\u0302'], ['\u1ec7', 'e\u0302\u0323'], ['\u1edd', 'o\u031b\u0300'],
  ['\u00c7', 'C\u0327'], ['\u0151', 'o\u030b'], ['\u0229', 'e\u0327'],
  ['\u212b', 'A\u030a'], ['\u2126', '\u03a9'], ['\u212a', 'K'], // singleton decompositions
  ['\uac00', '\u1100\u1161'], ['\ud55c', '\u1112\u1161\u11ab'], ['\uae00', '\u1100\u1173\u11af'],
  ['\u3094', '\u3046\u3099'], ['\u30ac', '\u30ab\u3099'], ['\u30d1', '\u30cf\u309a'],
  ['\u0958', '\u0915\u093c'], ['\u0929', '\u0928\u093c'], ['\u0390', '\u03b9\u0308\u0301'],
  ['\u1f00', '\u03b1\u0313'], ['\u0419', '\u0418\u0306'], ['\u0451', '\u0435\u0308'],
  ['\ufb01', 'fi'], ['\u00bd', '1\u20442'], ['\u2460', '1'], ['\u00b2', '2'],
];
const VIETNAMESE = [
  'Ti\u1ebfng Vi\u1ec7t c\u00f3 nhi\u1ec1u d\u1ea5u thanh.',
  'C\u00f4ng ngh\u1ec7 th\u00f4ng tin v\u00e0 tr\u00ed tu\u1ec7 nh\u00e2n t\u1ea1o',
  'Xin ch\u00e0o, t\u00f4i l\u00e0 ng\u01b0\u1eddi Vi\u1ec7t Nam.',
  '\u0110\u01b0\u1eddng ph\u1ed1 H\u00e0 N\u1ed9i r\u1ea5t \u0111\u00f4ng \u0111\u00fac.',
];
const COMBINING_MARKS = [];
for (let c = 0x300; c <= 0x36f; c++) COMBINING_MARKS.push(cp(c));
for (const c of [0x1ab0, 0x1dc0, 0x20d0, 0x20e3, 0xfe20, 0x0483, 0x0591, 0x064b, 0x093c, 0x094d, 0x0e31, 0x3099, 0x309a]) COMBINING_MARKS.push(cp(c));

// Interesting code point ranges for random generation. Surrogates excluded.
const CP_RANGES = [
  [0x20, 0x7e, 6], // ASCII printable (weight)
  [0x00, 0x1f, 1], // C0 controls (\u0000, \u0007, \u001b, ...)
  [0x7f, 0x9f, 1], // DEL + C1 controls (incl. U+0085)
  [0xa0, 0xff, 3], // Latin-1 supplement
  [0x100, 0x24f, 2], // Latin extended
  [0x250, 0x2ff, 1], // IPA, spacing modifiers
  [0x300, 0x36f, 3], // combining diacritics
  [0x370, 0x3ff, 1], // Greek
  [0x400, 0x4ff, 1], // Cyrillic
  [0x590, 0x5ff, 1], // Hebrew
  [0x600, 0x6ff, 1], // Arabic
  [0x900, 0x97f, 1], // Devanagari
  [0xe00, 0xe7f, 1], // Thai
  [0x1100, 0x11ff, 1], // Hangul jamo
  [0x1e00, 0x1eff, 1], // Latin extended additional
  [0x2000, 0x206f, 3], // General punctuation (spaces, ZWJ, LS/PS, bidi)
  [0x20a0, 0x20cf, 1], // currency
  [0x2100, 0x214f, 1], // letterlike (Kelvin, Ohm, Angstrom)
  [0x2190, 0x23ff, 1], // arrows, math
  [0x2500, 0x27bf, 2], // box drawing, dingbats, misc symbols
  [0x3000, 0x303f, 1], // CJK punctuation (U+3000)
  [0x3040, 0x30ff, 1], // kana
  [0x4e00, 0x9fff, 4], // CJK unified
  [0xac00, 0xd7a3, 1], // Hangul syllables
  [0xe000, 0xf8ff, 1], // private use
  [0xf900, 0xfaff, 1], // CJK compatibility (NFC singletons)
  [0xfe00, 0xfe0f, 1], // variation selectors
  [0xfe30, 0xfe4f, 1], // CJK compat forms
  [0xff00, 0xffef, 1], // halfwidth/fullwidth
  [0xfff0, 0xfffd, 1], // specials (U+FFFD etc.)
  [0x1d400, 0x1d7ff, 1], // math alphanumerics
  [0x1f000, 0x1faff, 4], // emoji & symbols
  [0x1f3fb, 0x1f3ff, 1], // skin tones
  [0x1f1e6, 0x1f1ff, 1], // regional indicators
  [0x20000, 0x2a6df, 1], // CJK ext B
  [0xe0000, 0xe007f, 1], // tags
  [0xf0000, 0xf00ff, 1], // supplementary private use A
  [0x10fff0, 0x10ffff, 1], // end of range (noncharacters)
];
const CP_WEIGHT_TOTAL = CP_RANGES.reduce((s, r) => s + r[2], 0);

function randomCodePoint(rng) {
  let w = rng.int(0, CP_WEIGHT_TOTAL - 1);
  for (const [lo, hi, weight] of CP_RANGES) {
    if (w < weight) {
      const c = rng.int(lo, hi);
      if (c >= 0xd800 && c <= 0xdfff) return 0xfffd;
      return c;
    }
    w -= weight;
  }
  return 0x61;
}

// Synthetic dialog-memory style material (invented).
const NAMES = ['Caroline', 'Melanie', 'Jon', 'Gina', 'Priya', 'Tomasz', 'Aiko', 'Mateo', 'Leila', 'Sven', 'Wei', 'Noor', 'Dmitri', 'Amara'];
const EVENTS = [
  'went to a pottery class', 'joined a community choir', 'ran a half marathon', 'adopted a rescue cat',
  'started volunteering at the food bank', 'painted a sunset over the lake', 'visited her grandmother in Ohio',
  'went camping with the kids', 'signed up for a counseling certification', 'attended an LGBTQ support group',
  'baked sourdough for the neighbors', 'took violin lessons', 'hiked the Blue Ridge trail', 'launched an online store',
  'went to a pride parade', 'read a book about mindfulness', 'fixed the old bicycle', 'planted tomatoes in the garden',
];
const TIMES = ['yesterday', 'last weekend', 'on 8 May 2023', 'two weeks ago', 'in July', 'this morning', 'on Friday night', 'back in 2019', 'on 2023-06-09'];
const FEELINGS = [
  'It felt really empowering.', 'Honestly I was nervous at first!', "I can't wait to go again :)", 'It was so peaceful.',
  "We're thinking of making it a tradition.", 'My therapist said it would help, and it did.', 'Best day in ages \u{1F60A}',
  'The kids loved it \u2014 especially the s\u2019mores.', 'I\'ll send you pictures later!', 'It reminded me why I started.',
];
const INSTRUCTIONS = [
  'Given a web search query, retrieve relevant passages that answer the query',
  'Given a question about a conversation, retrieve the dialog turn that contains the answer',
  'Retrieve memories relevant to the user question',
  'Given a query, determine whether the document contains the requested fact',
  'Judge whether the passage is relevant to the question, considering dates and names',
  '\u7ed9\u5b9a\u4e00\u4e2a\u67e5\u8be2\uff0c\u68c0\u7d22\u80fd\u591f\u56de\u7b54\u8be5\u67e5\u8be2\u7684\u6587\u6863',
  'Given a code search query, retrieve the function that implements it',
  'Find the message where the speaker mentions a hobby',
];
const QUESTIONS = [
  'When did {a} {e}?', 'What did {a} do {t}?', 'Who {e}?', 'How did {a} feel after the event?',
  'What hobby did {a} pick up recently?', 'Did {a} and {b} meet last week?', "What is {a}'s favorite activity?",
  '{a}\u4ec0\u4e48\u65f6\u5019{e}\uff1f', 'Where did {a} go {t}?', 'why did {a} stop going?',
];

const PREFIX = '<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the Instruct provided. Note that the answer can only be "yes" or "no".<|im_end|>\n<|im_start|>user\n';
const SUFFIX = '<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n';

// ---------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------

function caseVariants(s) {
  // All upper/lower combinations of the letters in s.
  const out = [''];
  for (const ch of s) {
    const lo = ch.toLowerCase();
    const up = ch.toUpperCase();
    const next = [];
    for (const p of out) {
      next.push(p + lo);
      if (up !== lo) next.push(p + up);
    }
    out.splice(0, out.length, ...next);
  }
  return out;
}

function englishSentence(rng, nWords) {
  const words = [];
  for (let i = 0; i < nWords; i++) {
    let w = rng.pick(EN_WORDS);
    if (i === 0 || rng.chance(0.05)) w = w[0].toUpperCase() + w.slice(1);
    if (rng.chance(0.02)) w = w.toUpperCase();
    words.push(w);
    if (rng.chance(0.08)) words[words.length - 1] += rng.pick([',', ';', ':', ' -', '']);
  }
  return words.join(' ') + rng.pick(['.', '.', '!', '?', '...', '']);
}

function dialogTurn(rng) {
  const a = rng.pick(NAMES);
  return `${a}: ${rng.pick(['I', 'We', 'My partner and I', 'So I'])} ${rng.pick(EVENTS).replace('her ', rng.pick(['her ', 'my ']))} ${rng.pick(TIMES)}. ${rng.pick(FEELINGS)}`;
}

function dialogDoc(rng, turns) {
  const lines = [];
  for (let i = 0; i < turns; i++) {
    let l = dialogTurn(rng);
    if (rng.chance(0.3)) l = `[${rng.int(1, 30)} ${rng.pick(['May', 'June', 'July', 'Aug'])} 2023, ${rng.int(1, 12)}:${String(rng.int(0, 59)).padStart(2, '0')} ${rng.pick(['am', 'pm'])}] ` + l;
    lines.push(l);
  }
  return lines.join(rng.pick(['\n', '\n', ' ', '\n\n']));
}

function question(rng) {
  return rng.pick(QUESTIONS)
    .replace('{a}', rng.pick(NAMES))
    .replace('{b}', rng.pick(NAMES))
    .replace('{e}', rng.pick(EVENTS))
    .replace('{t}', rng.pick(TIMES));
}

function rerankPrompt(instruction, query, doc) {
  return `${PREFIX}<Instruct>: ${instruction}\n<Query>: ${query}\n<Document>: ${doc}${SUFFIX}`;
}

function digits(rng, n) {
  let s = String(rng.int(1, 9));
  for (let i = 1; i < n; i++) s += String(rng.int(0, 9));
  return s;
}

function withThousands(s, sep) {
  return s.replace(/\B(?=(\d{3})+(?!\d))/g, sep);
}

// ---------------------------------------------------------------------------
// Build
// ---------------------------------------------------------------------------

function buildCorpusWithCategories() {
  const rng = makeRng(SEED);
  const out = [];
  const seen = new Set();
  const pool = []; // fragments for random mixes
  const add = (category, text, toPool = true) => {
    if (typeof text !== 'string') throw new Error('non-string');
    if (!isWellFormed(text)) throw new Error('lone surrogate in ' + category);
    if (seen.has(text)) return;
    seen.add(text);
    out.push({ text, category });
    if (toPool && text.length > 0 && text.length <= 200) pool.push(text);
  };

  add('empty', '', false);

  // --- English prose ---
  for (const s of EN_SENTENCES) add('english', s);
  for (const s of EN_SENTENCES.slice(0, 12)) {
    add('english', ' ' + s);
    add('english', s.toLowerCase());
    add('english', s.toUpperCase());
  }
  for (let i = 0; i < 260; i++) add('english', englishSentence(rng, rng.int(1, 40)));
  for (let i = 0; i < 20; i++) {
    const paras = [];
    for (let j = 0; j < rng.int(2, 5); j++) paras.push(englishSentence(rng, rng.int(10, 40)));
    add('english', paras.join(rng.pick(['\n\n', '\n', ' '])), false);
  }

  // --- Chinese ---
  for (const s of ZH_SENTENCES) add('chinese', s);
  for (let i = 0; i < 220; i++) {
    let s = '';
    const n = rng.int(1, 30);
    for (let j = 0; j < n; j++) s += rng.pick(ZH_PHRASES);
    add('chinese', s);
  }
  for (let i = 0; i < 20; i++) add('chinese', rng.pick(ZH_SENTENCES) + rng.pick(['', '\n', ' ', '\u3000']) + rng.pick(ZH_SENTENCES));

  // --- Mixed Chinese/English ---
  for (const s of MIXED_ZH_EN) add('mixed_zh_en', s);
  for (let i = 0; i < 200; i++) {
    let s = '';
    const n = rng.int(2, 16);
    for (let j = 0; j < n; j++) {
      s += rng.chance(0.5) ? rng.pick(ZH_PHRASES) : rng.pick([' ', '']) + rng.pick(EN_WORDS) + rng.pick([' ', '', '']);
      if (rng.chance(0.1)) s += String(rng.int(0, 2025));
    }
    add('mixed_zh_en', s);
  }

  // --- Code ---
  for (const s of CODE_SNIPPETS) {
    add('code', s);
    add('code', s.trimEnd());
    add('code', s.replace(/\n/g, '\r\n'));
    add('code', s.replace(/ {4}/g, '\t'));
    add('code', s.replace(/\t/g, '    '));
    add('code', s.replace(/\t/g, '  '));
  }
  const idents = ['x', 'foo', 'barBaz', 'snake_case_name', 'CONST_VALUE', '_private', '__dunder__', 'i18n', 'v2', 'HTTPServer', 'parseJSON', 'tokenizer_v3'];
  for (let i = 0; i < 120; i++) {
    const depth = rng.int(0, 6);
    const ind = rng.pick(['    ', '\t', '  ', ' ']);
    const lines = [];
    for (let j = 0; j < rng.int(1, 8); j++) {
      const d = Math.max(0, depth + rng.int(-2, 2));
      const a = rng.pick(idents), b = rng.pick(idents);
      lines.push(ind.repeat(d) + rng.pick([
        `${a} = ${b}(${rng.int(0, 1000)})`, `return ${a}.${b}`, `if ${a} != nil {`, `}`, `def ${a}(${b}, *args, **kwargs):`,
        `"${a}": ${rng.int(-50, 50)},`, `"${a}": "${b}",`, `// TODO(${a}): fix ${b}`, `# ${englishSentence(rng, 5)}`,
        `${a}[${rng.int(0, 9)}] += ${b}[i:j]`, `for ${a} := range ${b} {`, `print(f"{${a}=}")`, `${a}, err := ${b}()`,
      ]) + rng.pick(['', '', ' ', '  ', ';', '\t']));
    }
    add('code', lines.join(rng.pick(['\n', '\n', '\r\n'])) + rng.pick(['', '\n', '\n\n']));
  }

  // --- Emoji ---
  for (const e of EMOJI) {
    add('emoji', e);
    add('emoji', ' ' + e);
    add('emoji', e + e);
    add('emoji', 'word' + e + 'word');
  }
  for (let i = 0; i < 120; i++) {
    let s = '';
    for (let j = 0; j < rng.int(1, 12); j++) {
      s += rng.pick(EMOJI);
      if (rng.chance(0.3)) s += rng.pick([' ', '', '!', 'a', '\u4f60', '\n']);
    }
    add('emoji', s);
  }
  add('emoji', 'I love this \u{1F60D}\u{1F60D}\u{1F60D} so much!!! \u{1F389}\u{1F38A}');

  // --- Numbers ---
  for (let n = 1; n <= 40; n++) add('numbers', digits(rng, n));
  for (const n of [64, 100, 128, 255, 256, 500]) add('numbers', digits(rng, n), false);
  const numForms = [
    '1,000,000', '1.000.000,00', '1 000 000', '1\u00a0000\u00a0000', '1_000_000', '3.14159265358979323846',
    '-0.0001', '+42', '1e10', '6.022e23', '1.5E-7', '0.5%', '$1,234.56', '\u20ac99,99', '\u00a55000', '\u00a3300',
    '2023-05-08', '08/05/2023', '5/8/23', '2024-02-29T13:45:00Z', '13:45:07.123', '12:00 AM', '1990s', '21st',
    '3rd', '100km/h', '10x', 'v1.2.3-rc.4', '192.168.0.1', '::1', '+1 (555) 123-4567', '000123', '00', '0',
    '\uff11\uff12\uff13', '\u2160\u2161\u2162', '\u00b9\u00b2\u00b3', '\u00bd \u00bc \u00be', '\u0967\u0968\u0969',
    '\u0661\u0662\u0663', '\u5341\u4e07', '2\u00d73=6', '7\u00f72', '1/2', '\u221e', 'COVID-19', 'A4', 'x86_64', 'H2O',
  ];
  for (const s of numForms) {
    add('numbers', s);
    add('numbers', ' ' + s);
    add('numbers', 'abc' + s + 'def');
  }
  for (let i = 0; i < 120; i++) {
    const a = digits(rng, rng.int(1, 12));
    add('numbers', rng.pick([
      () => withThousands(a, ','), () => a + '.' + digits(rng, rng.int(1, 8)), () => `${rng.int(1900, 2100)}-${String(rng.int(1, 12)).padStart(2, '0')}-${String(rng.int(1, 28)).padStart(2, '0')}`,
      () => `${a} apples and ${digits(rng, 3)} oranges`, () => a + rng.pick(['%', 'px', 'ms', 'GB', '\u00b0C', '\u5143']),
      () => '-' + a, () => `${rng.int(0, 23)}:${String(rng.int(0, 59)).padStart(2, '0')}`, () => a.split('').join(' '),
      () => '\u7b2c' + a + '\u7ae0',
    ])());
  }

  // --- Whitespace ---
  for (const w of ASCII_SPACES) {
    for (const n of [1, 2, 3, 4, 5, 8, 16]) {
      const ws = w.repeat(n);
      add('whitespace', ws);
      add('whitespace', 'a' + ws + 'b');
      add('whitespace', ws + 'hello');
      add('whitespace', 'hello' + ws);
      add('whitespace', ws + 'hello' + ws);
      add('whitespace', 'x' + ws + '\u4f60');
      add('whitespace', '!' + ws + '!');
    }
  }
  add('whitespace', ' '.repeat(1000), false);
  add('whitespace', 'a' + ' '.repeat(1000) + 'b', false);
  add('whitespace', '\n'.repeat(200), false);
  add('whitespace', '\t'.repeat(300), false);
  add('whitespace', ' \n'.repeat(150), false);
  add('whitespace', 'end with trailing spaces   ');
  add('whitespace', '   start with leading spaces');
  add('whitespace', ' \n \n\tmixed at start and end \t\n  \n');
  add('whitespace', 'line1\r\nline2\r\n\r\nline3\r\n');
  add('whitespace', 'para1\n\n\npara2\n\n\n\npara3');
  add('whitespace', 'a \n b \n\n c \t\n d');
  for (let i = 0; i < 150; i++) {
    let s = '';
    for (let j = 0; j < rng.int(1, 10); j++) {
      s += rng.chance(0.5) ? rng.pick(ASCII_SPACES).repeat(rng.int(1, 6)) : rng.pick(['word', 'x', '1', '.', '\u4f60', '(', "'s", '\u00e9', '{']);
    }
    add('whitespace', s);
  }

  // --- Unicode spaces & format chars ---
  for (const u of UNICODE_SPACES) {
    add('unicode_space', u);
    add('unicode_space', u + u + u);
    add('unicode_space', 'a' + u + 'b');
    add('unicode_space', u + 'hello');
    add('unicode_space', 'hello' + u);
    add('unicode_space', ' ' + u + ' ');
    add('unicode_space', u + ' word');
    add('unicode_space', 'word ' + u);
    add('unicode_space', '\n' + u + '\n');
    add('unicode_space', '1' + u + '2');
    add('unicode_space', '\u4f60' + u + '\u597d');
  }
  add('unicode_space', '\uFEFFHello, BOM at start');
  add('unicode_space', '\uFEFF\uFEFF');
  add('unicode_space', '\uFEFF<|im_start|>user\n');
  add('unicode_space', 'no\u00A0break\u00A0space');
  add('unicode_space', '\u3000\u3000\u5168\u89d2\u7a7a\u683c\u3002');
  add('unicode_space', 'line\u2028separator\u2029paragraph');
  add('unicode_space', 'next\u0085line');
  for (let i = 0; i < 120; i++) {
    let s = '';
    for (let j = 0; j < rng.int(1, 8); j++) {
      s += rng.chance(0.5) ? rng.pick(UNICODE_SPACES).repeat(rng.int(1, 3)) : rng.pick(['word', ' ', '\n', 'X', '9', '!', '\u4e2d', "'ll"]);
    }
    add('unicode_space', s);
  }

  // --- Control characters ---
  for (const c of ['\u0000', '\u0001', '\u0007', '\u0008', '\u001b', '\u007f', '\u0080', '\u009f', '\uFFFD', '\uFFFE', '\uFFFF', '\uE000', '\uF8FF', '\u{F0000}', '\u{10FFFF}']) {
    add('controls', c);
    add('controls', 'a' + c + 'b');
    add('controls', ' ' + c + ' ');
    add('controls', c + '\n' + c);
  }
  add('controls', '\u001b[31mred\u001b[0m normal');
  add('controls', 'bell\u0007\u0007 null\u0000byte');

  // --- Contractions ---
  const contr = ['s', 't', 're', 've', 'm', 'll', 'd'];
  for (const c of contr) {
    for (const v of caseVariants(c)) {
      for (const ap of ["'", '\u2019']) {
        add('contractions', ap + v);
        add('contractions', 'it' + ap + v);
        add('contractions', 'IT' + ap + v);
        add('contractions', ' ' + ap + v);
        add('contractions', 'x' + ap + v + 'y');
        add('contractions', '1' + ap + v);
        add('contractions', 'we' + ap + v + ' go');
      }
    }
  }
  const longS = '\u017F';
  for (const s of [
    "'\u017F", "it'\u017F", "IT'\u017F", " '\u017F", "x'\u017Fy", "'\u017F'\u017F", "\u017F", "\u017Ft", "'\u017Ft",
    "Mu\u017Fic", "Gott'\u017F Wille", "'\u017Fs", "'S\u017F", "'\u017F\u017F\u017F", "'\u017F ", "'\u017F\n", "\u017F's",
    '\u212A', '\u212Aelvin', "'\u212A", "x'\u212A", '300\u212A', '\u212A\u212A', 'The \u212Aelvin sign', 'k\u212AK',
    "'\u0130", "'\u0131", "it'\u0130s", "'\uFF33", "'\u1E9E", "''s", "'''", "'", "''", "' s", "'s's's", "don't", "DON'T",
    "Don'T", "shouldn't've", "SHOULDN'T'VE", "we'Re", "they'RE", "I'M", "i'm", "you'LL", "she'D", "he'd've",
  ]) add('contractions', s);
  for (let i = 0; i < 80; i++) {
    const w = rng.pick(EN_WORDS);
    const c = rng.pick(caseVariants(rng.pick(contr)));
    add('contractions', `${rng.pick(['', ' ', 'The '])}${w}${rng.pick(["'", '\u2019', "'", longS])}${c}${rng.pick(['', ' ', ' again', '.', '\n', "'s"])}`);
  }

  // --- Combining accents / normalization ---
  for (const [comp, dec] of COMBINING) {
    add('combining', comp);
    add('combining', dec);
    add('combining', 'caf' + comp);
    add('combining', 'caf' + dec);
    add('combining', ' ' + dec + ' ' + comp);
    add('combining', dec.toUpperCase());
  }
  for (const v of VIETNAMESE) {
    add('combining', v);
    add('combining', v.normalize('NFD'));
    add('combining', v.toUpperCase());
  }
  for (const m of COMBINING_MARKS) {
    add('combining', 'a' + m);
    add('combining', m);
    add('combining', ' ' + m);
  }
  add('combining', 'Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349\u035a\u032f\u031e\u0320\u034dA\u036b\u0357\u0334\u0362\u0335\u031c\u0330\u0354L\u0368\u0367\u0369\u0358\u0320G\u0311\u0357\u030e\u0305\u035b\u0341\u0334\u033b\u0348\u034d\u0354\u0339O\u0342\u030c\u030c\u0358\u0328\u0335\u0339\u033b\u031d\u0333');
  for (let i = 0; i < 100; i++) {
    let s = '';
    for (let j = 0; j < rng.int(1, 10); j++) {
      s += rng.pick(['a', 'e', 'o', 'u', 'N', ' ', '\u0915', '\u05d0', '\u0627', '\u1100', '\u1161', '\u11a8', '\uac00', 'x']);
      for (let k = 0; k < rng.int(0, 4); k++) s += rng.pick(COMBINING_MARKS);
    }
    add('combining', s);
  }
  for (let i = 0; i < 40; i++) {
    // Hangul: syllables vs conjoining jamo sequences
    const L = 0x1100 + rng.int(0, 18), V = 0x1161 + rng.int(0, 20), T = rng.chance(0.5) ? 0x11a8 + rng.int(0, 26) : 0;
    const jamo = cp(L) + cp(V) + (T ? cp(T) : '');
    add('combining', jamo);
    add('combining', jamo.normalize('NFC'));
    add('combining', jamo + ' ' + jamo.normalize('NFC'));
  }

  // --- Other scripts ---
  for (const [name, list] of Object.entries(SCRIPTS)) {
    for (const s of list) {
      add('script_' + name, s);
      add('script_' + name, ' ' + s);
      add('script_' + name, s + '\n');
      add('script_' + name, s.normalize('NFD'));
    }
    for (let i = 0; i < 30; i++) {
      const a = rng.pick(list), b = rng.pick(list);
      const ca = [...a];
      const st = rng.int(0, ca.length - 1);
      add('script_' + name, ca.slice(st, st + rng.int(1, 20)).join('') + rng.pick([' ', '', '\n', ', ', ' 42 ']) + b);
    }
  }

  // --- Special tokens ---
  for (const t of SPECIAL_TOKENS) {
    add('special', t);
    add('special', ' ' + t);
    add('special', t + ' ');
    add('special', '\n' + t + '\n');
    add('special', 'text' + t + 'text');
    add('special', 'text ' + t + ' text');
    add('special', t + t);
    add('special', '  ' + t + '\n\n');
    add('special', ' ' + t + ' ');
  }
  for (const p of PARTIAL_SPECIALS) {
    add('special', p);
    add('special', ' ' + p + ' ');
    add('special', p + '<|im_end|>');
    add('special', 'x' + p + 'y');
  }
  for (const s of [
    '<|im_start|><|im_end|>', '<|im_start|> <|im_end|>', '<|im_start|>\n<|im_end|>', '<|im_start|><|im_start|><|im_start|>',
    '<|im_start|<|im_end|>', '<|im_start|>|>', '<<|im_end|>', '<|endoftext|><|endoftext|>', '<think></think>',
    '<think>\n\n</think>\n\n', '<think>\n\n</think>', '</think><think>', 'yes<|im_end|>', 'no<|im_end|>\n',
    '<|im_start|>assistant\n<think>\n\n</think>\n\nyes', '<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n',
    'Use <|im_start|> and <|im_end|> to delimit turns.', '\u4f60\u597d<|im_end|>\u4e16\u754c', '\u{1F600}<|endoftext|>\u{1F600}',
    '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>', '<|fim_prefix|>def f():<|fim_suffix|>\n<|fim_middle|>',
    '\uFEFF<|im_start|>', '<|im_start|>\uFEFF', ' \u00A0<|im_end|>\u00A0 ', '<|im_end|>\r\n', "<|im_end|>'s", "<think>'ll",
  ]) add('special', s);
  for (let i = 0; i < 100; i++) {
    let s = '';
    for (let j = 0; j < rng.int(1, 8); j++) {
      s += rng.pick([rng.pick(SPECIAL_TOKENS), rng.pick(PARTIAL_SPECIALS), ' ', '\n', 'yes', 'no', 'word', '\u4f60\u597d', '  ', '\n\n', '|', '<', '>']);
    }
    add('special', s);
  }

  // --- Qwen3-Reranker prompts ---
  add('rerank_prompt', PREFIX + SUFFIX, false);
  add('rerank_prompt', PREFIX, false);
  add('rerank_prompt', SUFFIX, false);
  add('rerank_prompt', rerankPrompt(INSTRUCTIONS[0], '', ''), false);
  add('rerank_prompt', rerankPrompt(INSTRUCTIONS[0], 'What is the capital of China?', 'The capital of China is Beijing.'), false);
  add('rerank_prompt', rerankPrompt(INSTRUCTIONS[0], 'Explain gravity', 'Gravity is a force that attracts two bodies towards each other. It gives weight to physical objects and is responsible for the movement of planets around the sun.'), false);
  for (let i = 0; i < 240; i++) {
    const inst = rng.pick(INSTRUCTIONS);
    const q = question(rng);
    let doc;
    switch (rng.int(0, 5)) {
      case 0: doc = dialogDoc(rng, rng.int(1, 3)); break;
      case 1: doc = dialogDoc(rng, rng.int(3, 6)); break;
      case 2: doc = englishSentence(rng, rng.int(5, 60)); break;
      case 3: doc = rng.pick(ZH_SENTENCES) + rng.pick(MIXED_ZH_EN) + dialogTurn(rng); break;
      case 4: doc = rng.pick(CODE_SNIPPETS); break;
      default: doc = dialogTurn(rng) + ' ' + rng.pick(EMOJI) + rng.pick([' ', '\n']) + rng.pick(pool).slice(0, 80); break;
    }
    add('rerank_prompt', rerankPrompt(inst, q, doc), false);
  }

  // --- Random mixes: fragments + random code points ---
  const poolSnapshot = pool.slice();
  const fragExtras = [...EMOJI, ...UNICODE_SPACES, ...SPECIAL_TOKENS, ...PARTIAL_SPECIALS, ...COMBINING_MARKS, ...ASCII_SPACES, '\u0000', '\u0007', '\u001b', '\u001b[31m', '\u007f', '\uE000', '\uFFFD', '\uFFFF', '\u{10FFFF}'];
  for (let i = 0; i < 1100; i++) {
    const target = rng.chance(0.6) ? rng.int(1, 60) : rng.int(1, 400);
    let s = '';
    let n = 0;
    while (n < target) {
      const r = rng.float();
      let piece;
      if (r < 0.35) {
        const f = [...rng.pick(poolSnapshot)];
        const st = rng.int(0, f.length - 1);
        piece = f.slice(st, st + rng.int(1, 40)).join('');
      } else if (r < 0.55) {
        piece = rng.pick(fragExtras);
      } else {
        piece = '';
        for (let k = rng.int(1, 8); k > 0; k--) piece += cp(randomCodePoint(rng));
      }
      s += piece;
      n += [...piece].length;
    }
    const cps = [...s];
    if (cps.length > target) s = cps.slice(0, target).join('');
    add('random_mix', s, false);
  }

  // --- Unicode-version edge: marks assigned after the reference's Unicode
  // tables (which treat them as class-0 starters) and the one composition
  // added since (U+11935 U+11930). Mirrors refStarters in tokenizer/nfc_ref.go.
  const REF_STARTERS = [0x07FD, 0x0898, 0x0899, 0x089A, 0x089B, 0x089C, 0x089D, 0x089E, 0x089F, 0x08CA, 0x08CB, 0x08CC, 0x08CD, 0x08CE, 0x08CF, 0x08D0, 0x08D1, 0x08D2, 0x08D3, 0x09FE, 0x0C3C, 0x0D3B, 0x0D3C, 0x0EBA, 0x1715, 0x1ABF, 0x1AC0, 0x1AC1, 0x1AC2, 0x1AC3, 0x1AC4, 0x1AC5, 0x1AC6, 0x1AC7, 0x1AC8, 0x1AC9, 0x1ACA, 0x1ACB, 0x1ACC, 0x1ACD, 0x1ACE, 0x1DF6, 0x1DF7, 0x1DF8, 0x1DF9, 0x1DFA, 0xA82C, 0x10D24, 0x10D25, 0x10D26, 0x10D27, 0x10EAB, 0x10EAC, 0x10EFD, 0x10EFE, 0x10EFF, 0x10F46, 0x10F47, 0x10F48, 0x10F49, 0x10F4A, 0x10F4B, 0x10F4C, 0x10F4D, 0x10F4E, 0x10F4F, 0x10F50, 0x10F82, 0x10F83, 0x10F84, 0x10F85, 0x11070, 0x1133B, 0x1145E, 0x11839, 0x1183A, 0x11930, 0x1193D, 0x1193E, 0x11943, 0x119E0, 0x11A34, 0x11A47, 0x11A99, 0x11D42, 0x11D44, 0x11D45, 0x11D97, 0x11F41, 0x11F42, 0x16FF0, 0x16FF1, 0x1E08F, 0x1E130, 0x1E131, 0x1E132, 0x1E133, 0x1E134, 0x1E135, 0x1E136, 0x1E2AE, 0x1E2EC, 0x1E2ED, 0x1E2EE, 0x1E2EF, 0x1E4EC, 0x1E4ED, 0x1E4EE, 0x1E4EF];
  for (const c of REF_STARTERS) {
    const x = cp(c);
    for (const probe of ['a' + x + '\u0308', '\u0308' + x, 'a' + x + '\u0316', x + '\u0334 ok', 'e\u0301' + x + 'e\u0301', '\u{11935}' + x]) {
      add('unicode_version', probe, false);
    }
  }

  return out;
}

function buildCorpus() {
  return buildCorpusWithCategories().map((e) => e.text);
}

module.exports = { buildCorpus, buildCorpusWithCategories, PREFIX, SUFFIX, SEED };

if (require.main === module) {
  const c = buildCorpusWithCategories();
  const counts = {};
  for (const e of c) counts[e.category] = (counts[e.category] || 0) + 1;
  console.log(JSON.stringify({ count: c.length, categories: counts }, null, 1));
}
