#!/usr/bin/env node
'use strict';
// Called by graphemes.sh: node graphemes.js CHARSMAP NEW.txt OUT.json
process.env.TOKENIZERS_PARALLELISM = 'false';
const fs = require('fs');
const path = require('path');
const { refDir, REF_PACKAGE } = require('../ref');
const T = require(path.join(refDir(), 'node_modules', ...REF_PACKAGE.split('/')));
const [charsmap, newFile, outFile] = process.argv.slice(2);
const n = T.precompiled(Array.from(fs.readFileSync(charsmap)));
const after = [];
for (let cp = 0; cp <= 0x10ffff; cp++) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue;
  if (n.normalizeString('a' + String.fromCodePoint(cp)) === 'b') {
    const last = after[after.length - 1];
    if (last && last[1] === cp - 1) last[1] = cp; else after.push([cp, cp]);
  }
}
const before = [];
const news = fs.readFileSync(newFile, 'utf8').split('\n').map(Number);
for (const cp of news) if (n.normalizeString(String.fromCodePoint(cp) + 'a') === 'x') before.push(cp);
fs.writeFileSync(outFile, JSON.stringify({ reference: 'tokenizers 0.22.2', joins_after_a: after, joins_before_a: before, probed_before: news }) + '\n');
console.error(`${after.length} ranges join after "a"; ${before.length} of ${news.length} join before "a"`);
