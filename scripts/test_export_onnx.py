"""Unit tests for the pure (stdlib-only) helpers of export_onnx.py.

Run: python3 -m unittest discover -s scripts -p 'test_export_onnx.py'
Expectations are computed by hand; nothing here needs torch, transformers or onnx.
"""
import argparse
import contextlib
import io
import math
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_onnx as ex  # noqa: E402

# Qwen3 ids, used only as expectations: the script looks them up from the tokenizer.
QWEN3_YES, QWEN3_NO, QWEN3_UNK = 9693, 2152, None


def args(**kw):
    base = dict(model='Qwen/Qwen3-Reranker-0.6B', revision=None, out='/tmp/rerankd-export-test',
                opset=18, dtype='fp32', quantize=None, max_length=8192, verify=False,
                pairs=None, atol=1e-3, device='cpu', dynamo=False, rerankd=None)
    base.update(kw)
    return argparse.Namespace(**base)


class TestPrompt(unittest.TestCase):
    def test_full_prompt_text(self):
        want = ('<|im_start|>system\nJudge whether the Document meets the requirements based on '
                'the Query and the Instruct provided. Note that the answer can only be "yes" or '
                '"no".<|im_end|>\n<|im_start|>user\n'
                '<Instruct>: Given a web search query, retrieve relevant passages that answer '
                'the query\n<Query>: q?\n<Document>: d.'
                '<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n')
        self.assertEqual(ex.build_prompt('q?', 'd.'), want)

    def test_parts(self):
        cases = [  # (query, doc, instruction, head tail, doc part)
            ('q', 'd', None,
             '<Instruct>: ' + ex.DEFAULT_INSTRUCTION + '\n<Query>: q\n<Document>:', ' d'),
            ('q', '', 'I', '<Instruct>: I\n<Query>: q\n<Document>:', ' '),
            ('多少', ' 前导空格', '', '<Instruct>: \n<Query>: 多少\n<Document>:', '  前导空格'),
        ]
        for q, d, ins, head_tail, doc in cases:
            with self.subTest(q=q, d=d):
                head, doc_part, suffix = ex.prompt_parts(q, d, ins)
                self.assertEqual(head, ex.PREFIX + head_tail)
                self.assertEqual(doc_part, doc)
                self.assertEqual(suffix, ex.SUFFIX)
                self.assertEqual(head + doc_part + suffix, ex.build_prompt(q, d, ins))

    def test_builtin_pairs(self):
        self.assertEqual(len(ex.BUILTIN_PAIRS), 8)
        lengths = sorted(len(d) for _, d, _ in ex.BUILTIN_PAIRS)
        self.assertLess(lengths[0], 10)       # a tiny document
        self.assertGreater(lengths[-1], 4000)  # and a long one (~1000+ tokens)


class TestTruncate(unittest.TestCase):
    def test_table(self):
        H, S = [1, 2, 3], [9, 9]   # head (template + query) and suffix ids
        cases = [  # (doc, max_length, want ids, want removed)
            ([4, 5, 6], 8, [1, 2, 3, 4, 5, 6, 9, 9], 0),
            ([4, 5, 6], 100, [1, 2, 3, 4, 5, 6, 9, 9], 0),
            ([4, 5, 6], 7, [1, 2, 3, 4, 5, 9, 9], 1),
            ([4, 5, 6], 6, [1, 2, 3, 4, 9, 9], 2),
            ([], 5, [1, 2, 3, 9, 9], 0),
        ]
        for doc, n, want, removed in cases:
            with self.subTest(doc=doc, n=n):
                ids, cut = ex.truncate_doc(H, doc, S, n)
                self.assertEqual(ids, want)
                self.assertEqual(cut, removed)
                self.assertLessEqual(len(ids), n)
                self.assertEqual(ids[:3], H)   # template + query intact
                self.assertEqual(ids[-2:], S)  # suffix never cut

    def test_too_small(self):
        for doc, n in [([4], 5), ([], 4), ([4, 5], 1)]:
            with self.subTest(doc=doc, n=n):
                with self.assertRaisesRegex(ValueError, 'template \\+ query take 5 tokens'):
                    ex.truncate_doc([1, 2, 3], doc, [9, 9], n)

    def test_inputs_not_mutated(self):
        doc = [4, 5, 6]
        ex.truncate_doc([1], doc, [2], 3)
        self.assertEqual(doc, [4, 5, 6])


class TestPadding(unittest.TestCase):
    def test_right_pad(self):
        cases = [  # (seqs, pad, ids, mask, last index)
            ([[5, 6, 7], [8]], 0, [[5, 6, 7], [8, 0, 0]], [[1, 1, 1], [1, 0, 0]], [2, 0]),
            ([[1], [2, 3]], 151643, [[1, 151643], [2, 3]], [[1, 0], [1, 1]], [0, 1]),
            ([[4, 4]], 0, [[4, 4]], [[1, 1]], [1]),
        ]
        for seqs, pad, want_ids, want_mask, last in cases:
            with self.subTest(seqs=seqs):
                ids, mask = ex.right_pad(seqs, pad)
                self.assertEqual(ids, want_ids)
                self.assertEqual(mask, want_mask)
                self.assertEqual(ex.last_real_index(mask), last)
                # the token at the last real index is each sequence's own last token
                self.assertEqual([r[i] for r, i in zip(ids, last)], [s[-1] for s in seqs])

    def test_right_pad_errors(self):
        for seqs in ([], [[1], []]):
            with self.subTest(seqs=seqs):
                self.assertRaises(ValueError, ex.right_pad, seqs, 0)

    def test_last_real_index_rejects(self):
        for mask in ([[0, 0]], [[0, 1, 1]], [[1, 0, 1]], [[2, 0]], [[1, 1], [0, 0]]):
            with self.subTest(mask=mask):
                self.assertRaises(ValueError, ex.last_real_index, mask)


class TestPairs(unittest.TestCase):
    def test_ok(self):
        lines = ['{"query": "q1", "document": "d1"}\n', '\n', '   \n',
                 '{"query": "q2", "document": "", "instruction": "I", "label": 1}\n']
        self.assertEqual(ex.parse_pairs(lines, 'p.jsonl'), [('q1', 'd1', None), ('q2', '', 'I')])

    def test_errors_have_line_numbers(self):
        cases = [  # (lines, expected message fragments)
            (['{"query": "q", "document": "d"}', '{bad json'], ['p.jsonl:2: invalid JSON']),
            (['[1, 2]'], ['p.jsonl:1: expected a JSON object']),
            (['{"query": "q"}'], ['p.jsonl:1: document must be a string']),
            (['{"query": 3, "document": 4}'], ['p.jsonl:1: query, document must be a string']),
            (['{"query": "q", "document": "d", "instruction": 1}'],
             ['p.jsonl:1: instruction must be a string']),
            (['{"query": "  ", "document": "d"}'], ['p.jsonl:1: query is empty']),
            (['', '{"x": 1}', 'nope'], ['p.jsonl:2: query, document', 'p.jsonl:3: invalid JSON']),
            ([], ['p.jsonl: no pairs']),
            (['\n'], ['p.jsonl: no pairs']),
        ]
        for lines, frags in cases:
            with self.subTest(lines=lines):
                with self.assertRaises(ValueError) as cm:
                    ex.parse_pairs(lines, 'p.jsonl')
                msg = str(cm.exception)
                for f in frags:
                    self.assertIn(f, msg)
                self.assertEqual(len(msg.splitlines()), len(frags))  # all errors, one line each


class TestValidateArgs(unittest.TestCase):
    def test_ok(self):
        for kw in ({}, dict(dtype='fp16', device='cuda'), dict(quantize='int8', verify=True),
                   dict(opset=14), dict(opset=23), dict(dynamo=True, opset=18)):
            with self.subTest(kw=kw):
                self.assertEqual(ex.validate_args(args(**kw)), [])

    def test_problems(self):
        cases = [  # (kwargs, expected fragments, one per problem)
            (dict(opset=13), ['--opset must be between 14 and 23']),
            (dict(opset=24), ['--opset must be between 14 and 23']),
            (dict(dynamo=True, opset=17), ['--dynamo needs --opset 18']),
            (dict(quantize='int8', dtype='fp16'), ['--quantize int8 needs --dtype fp32']),
            (dict(max_length=0), ['--max-length must be positive']),
            (dict(atol=0.0), ['--atol must be a positive']),
            (dict(atol=float('nan')), ['--atol must be a positive']),
            (dict(atol=float('inf')), ['--atol must be a positive']),
            (dict(pairs='/nonexistent/p.jsonl'),
             ['--pairs only makes sense with --verify',
              '--pairs /nonexistent/p.jsonl: no such file']),
            (dict(model='  ', out=''), ['--model is required', '--out is required']),
            (dict(opset=9, max_length=-1, atol=-1.0, quantize='int8', dtype='fp16'),
             ['--opset', '--quantize', '--max-length', '--atol']),
        ]
        for kw, frags in cases:
            with self.subTest(kw=kw):
                got = ex.validate_args(args(**kw))
                self.assertEqual(len(got), len(frags), got)
                for msg, frag in zip(got, frags):
                    self.assertIn(frag, msg)

    def test_out_is_a_file_and_pairs_exists(self):
        with tempfile.NamedTemporaryFile(suffix='.jsonl') as f:
            self.assertEqual(ex.validate_args(args(pairs=f.name, verify=True)), [])
            got = ex.validate_args(args(out=f.name))
            self.assertEqual(len(got), 1)
            self.assertIn('is not a folder', got[0])


    def test_rerankd_binary(self):
        with tempfile.TemporaryDirectory() as d:
            exe, plain = os.path.join(d, 'rerankd'), os.path.join(d, 'notes.txt')
            for path, mode in ((exe, 0o755), (plain, 0o644)):
                with open(path, 'w') as f:
                    f.write('#!/bin/sh\n')
                os.chmod(path, mode)
            self.assertEqual(ex.validate_args(args(rerankd=exe)), [])
            for bad in (plain, os.path.join(d, 'missing'), d):
                with self.subTest(bad=bad):
                    got = ex.validate_args(args(rerankd=bad))
                    self.assertEqual(len(got), 1, got)
                    self.assertIn('not an executable file', got[0])


class TestSharedPrefix(unittest.TestCase):
    def test_feeds(self):
        cases = [  # (seqs, prefix, packed, mask)
            ([[1, 2, 3, 4], [1, 2, 5]], [1, 2], [3, 4, 5], [[1, 1], [1, 0]]),
            # the prefix stops one token short of the shortest row
            ([[1, 2, 3], [1, 2, 3, 4]], [1, 2], [3, 3, 4], [[1, 0], [1, 1]]),
            ([[7, 8]], [7], [8], [[1]]),
            ([[1, 2, 3], [1, 9, 9]], [1], [2, 3, 9, 9], [[1, 1], [1, 1]]),
        ]
        for seqs, prefix, packed, mask in cases:
            with self.subTest(seqs=seqs):
                self.assertEqual(ex.shared_prefix_feeds(seqs), (prefix, packed, mask))
                # the rows are recovered from the feeds
                p, k, m, off = prefix, packed, mask, 0
                for q, row in zip(seqs, m):
                    n = sum(row)
                    self.assertEqual(p + k[off:off + n], q)
                    off += n
                self.assertEqual(off, len(k))

    def test_feeds_errors(self):
        for seqs, frag in (([], 'no sequences'), ([[1]], 'at least 2 tokens'),
                           ([[1, 2], [3, 4]], 'no first token')):
            with self.subTest(seqs=seqs):
                with self.assertRaises(ValueError) as c:
                    ex.shared_prefix_feeds(seqs)
                self.assertIn(frag, str(c.exception))

    def test_groups(self):
        self.assertEqual(ex.prefix_groups(['a', 'b', 'a', 'c', 'b']), [[0, 2], [1, 4], [3]])
        self.assertEqual(ex.prefix_groups([]), [])

    def test_convert_cmd(self):
        self.assertEqual(ex.rerankd_convert_cmd('bin/rerankd', 'Qwen/Qwen3-Reranker-0.6B', None, 'o/r'),
                         ['bin/rerankd', 'convert', '--from', 'Qwen/Qwen3-Reranker-0.6B', '--out', 'o/r'])
        self.assertEqual(ex.rerankd_convert_cmd('r', './ckpt', 'abc123', 'o')[-2:],
                         ['--revision', 'abc123'])

    def test_checkpoint_source(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(ex.checkpoint_source(d, 'main'), d)  # a folder: read in place
        try:
            import huggingface_hub  # noqa: F401
        except ImportError:  # no hub client: rerankd convert downloads the id itself
            with contextlib.redirect_stdout(io.StringIO()) as out:
                self.assertEqual(ex.checkpoint_source('acme/reranker', None), 'acme/reranker')
            self.assertIn('rerankd convert downloads it', out.getvalue())

    def test_rerankd_models(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(ex.rerankd_models(d), [])
            for name in ('model.onnx', 'shared_prefix.onnx', 'model.int8.onnx'):
                open(os.path.join(d, name), 'w').close()
            got = [(label, kind, layout) for label, kind, _, layout in ex.rerankd_models(d)]
            self.assertEqual(got, [('rerankd model.onnx', 'fp32', 'plain'),
                                   ('rerankd shared_prefix.onnx', 'fp32', 'shared'),
                                   ('rerankd model.int8.onnx', 'int8', 'plain')])


class TestNumbers(unittest.TestCase):
    def test_sigmoid(self):
        cases = [(0.0, 0.5), (math.log(3), 0.75), (-math.log(3), 0.25),
                 (1000.0, 1.0), (-1000.0, 0.0)]
        for x, want in cases:
            with self.subTest(x=x):
                self.assertAlmostEqual(ex.sigmoid(x), want, places=12)
        # softmax over [no, yes] equals sigmoid(yes - no): yes=2.5, no=0.5
        p_yes = math.exp(2.5) / (math.exp(2.5) + math.exp(0.5))
        self.assertAlmostEqual(ex.sigmoid(2.5 - 0.5), p_yes, places=12)

    def test_compare_scores(self):
        cases = [  # (ref, got, max, mean)
            ([0.5], [0.5], 0.0, 0.0),
            ([0.1, 0.9, 0.5], [0.1, 0.8, 0.7], 0.2, 0.1),
            ([0.25, 0.75], [0.75, 0.25], 0.5, 0.5),
            ([0.5, 0.5], [float('nan'), 0.5], math.inf, math.inf),
        ]
        for ref, got, mx, mean in cases:
            with self.subTest(ref=ref, got=got):
                a, b = ex.compare_scores(ref, got)
                self.assertAlmostEqual(a, mx, places=12)
                self.assertAlmostEqual(b, mean, places=12)
        for ref, got in (([], []), ([0.1], [0.1, 0.2])):
            self.assertRaises(ValueError, ex.compare_scores, ref, got)

    def test_tolerance_for(self):
        cases = [('fp32', 1e-3, 1e-3, False), ('fp32', 0.5, 0.5, False),
                 ('fp16', 1e-3, 2e-2, True), ('fp16', 5e-2, 5e-2, False),
                 ('int8', 1e-3, 1e-1, True), ('int8', 0.2, 0.2, False)]
        for kind, atol, tol, loose in cases:
            with self.subTest(kind=kind, atol=atol):
                self.assertEqual(ex.tolerance_for(kind, atol), (tol, loose))

    def test_needs_external_data(self):
        gib = 2**30
        cases = [(0, False), (600 * 2**20, False), (2 * gib - 1 - 64 * 2**20, False),
                 (2 * gib - 64 * 2**20, True), (int(2.4e9), True), (32 * gib, True)]
        for n, want in cases:
            with self.subTest(n=n):
                self.assertEqual(ex.needs_external_data(n), want)
        self.assertTrue(ex.needs_external_data(100, limit=150, headroom=60))
        self.assertFalse(ex.needs_external_data(100, limit=150, headroom=50))


class TestContract(unittest.TestCase):
    GOOD_IN = [('input_ids', 7, ['batch', 'seq']), ('attention_mask', 7, ['batch', 'seq'])]
    GOOD_OUT = [('logits', 1, ['batch'])]

    def test_good(self):
        self.assertEqual(ex.contract_problems(self.GOOD_IN, self.GOOD_OUT), [])

    def test_bad(self):
        cases = [  # (inputs, outputs, number of problems)
            (self.GOOD_IN[:1], self.GOOD_OUT, 1),
            ([('input_ids', 6, ['batch', 'seq']), self.GOOD_IN[1]], self.GOOD_OUT, 1),
            (self.GOOD_IN[::-1], self.GOOD_OUT, 1),
            (self.GOOD_IN, [('logits', 1, ['batch', 1])], 1),
            (self.GOOD_IN, [('logits', 10, ['batch'])], 1),       # fp16 output
            (self.GOOD_IN, [('scores', 1, ['batch'])], 1),
            ([('input_ids', 7, ['batch', 'sequence']), self.GOOD_IN[1]], [], 2),
        ]
        for ins, outs, n in cases:
            with self.subTest(ins=ins, outs=outs):
                self.assertEqual(len(ex.contract_problems(ins, outs)), n)


class TestTokensAndMetadata(unittest.TestCase):
    def test_check_yes_no(self):
        ex.check_yes_no(QWEN3_YES, QWEN3_NO, QWEN3_UNK)
        for yes, no, unk in [(None, 2152, None), (9693, None, None), (0, 0, None),
                             (5, 2152, 5), (-1, 2152, None), ('9693', 2152, None)]:
            with self.subTest(yes=yes, no=no, unk=unk):
                self.assertRaises(ValueError, ex.check_yes_no, yes, no, unk)

    def test_metadata(self):
        m = ex.metadata_props('Qwen/Qwen3-Reranker-0.6B', 'abc123', QWEN3_YES, QWEN3_NO, 'fp32')
        self.assertEqual(m['producer'], 'rerankd export_onnx.py')
        self.assertEqual(m['head'], 'logit')
        self.assertEqual((m['yes_token_id'], m['no_token_id']), ('9693', '2152'))
        self.assertEqual((m['source'], m['revision']), ('Qwen/Qwen3-Reranker-0.6B', 'abc123'))
        self.assertTrue(all(isinstance(v, str) for v in m.values()))
        self.assertEqual(ex.metadata_props('/m', None, 1, 2, 'fp16')['revision'], 'unknown')


class TestModuleHygiene(unittest.TestCase):
    def test_no_heavy_imports_at_module_level(self):
        for name in ('torch', 'transformers', 'onnx', 'onnxruntime', 'numpy'):
            self.assertFalse(hasattr(ex, name), name)

    def test_cli_reports_all_problems_before_heavy_imports(self):
        err = io.StringIO()
        with self.assertRaises(SystemExit) as cm, contextlib.redirect_stderr(err):
            ex.main(['--model', 'm', '--out', '/tmp/x', '--opset', '9', '--atol', '0'])
        self.assertEqual(cm.exception.code, 2)
        self.assertIn('--opset must be between 14 and 23, got 9', err.getvalue())
        self.assertIn('--atol must be a positive number, got 0.0', err.getvalue())

    def test_cli_bad_pairs_file_fails_before_heavy_imports(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, 'p.jsonl')
            with open(path, 'w', encoding='utf-8') as f:
                f.write('{"query": "q", "document": "d"}\n{"query": "q"}\nnot json\n')
            with self.assertRaises(SystemExit) as cm:
                ex.main(['--model', 'm', '--out', d, '--verify', '--pairs', path])
        msg = str(cm.exception.code)
        self.assertIn('p.jsonl:2: document must be a string', msg)
        self.assertIn('p.jsonl:3: invalid JSON', msg)
        self.assertNotIn('pip install', msg)  # failed before importing torch

    def test_missing_dependency_message(self):
        with self.assertRaises(SystemExit) as cm:
            ex._import(['json', 'surely_not_a_module_rerankd'])
        self.assertIn(ex.INSTALL_HINT, str(cm.exception.code))
        self.assertIn('surely_not_a_module_rerankd', str(cm.exception.code))


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RERANKD = os.path.join(ROOT, 'bin', 'rerankd')
QWEN3_TOKENIZER = os.environ.get('RERANKD_TOKENIZER') or os.path.join(
    os.environ.get('RERANKD_CACHE') or os.path.join(
        os.environ.get('XDG_CACHE_HOME') or os.path.expanduser('~/.cache'), 'rerankd'),
    'tokenizers', 'qwen3')


@unittest.skipUnless(os.access(RERANKD, os.X_OK) and os.path.exists(QWEN3_TOKENIZER),
                     'needs bin/rerankd (make build) and the Qwen3 tokenizer (scripts/setup.sh)')
class TestWithRealTokenizer(unittest.TestCase):
    """Uses the project's exact Qwen3 tokenizer (parity with HF tokenizers) when present."""

    def encode(self, texts):
        import json
        import subprocess
        inp = ''.join(json.dumps({'text': t}) + '\n' for t in texts)
        out = subprocess.run([RERANKD, 'tokenize', '-tokenizer', QWEN3_TOKENIZER], input=inp,
                             capture_output=True, text=True, check=True).stdout
        return [json.loads(line)['ids'] for line in out.splitlines()]

    def test_yes_no_ids(self):
        self.assertEqual(self.encode(['yes', 'no']), [[QWEN3_YES], [QWEN3_NO]])

    def test_split_encoding_equals_whole_prompt(self):
        docs = [d for _, d, _ in ex.BUILTIN_PAIRS] + [
            '', ' ', '123 apples', '\nnew line', '  two spaces', ':colon', '\U0001F600 emoji',
            "'s", '\t tab', '\u200bzero width', '\u3002\u4e2d\u6587', '\r\nCRLF', 'x\n']
        cases = ex.BUILTIN_PAIRS + [('q?', d, None) for d in docs[8:]]
        texts = [t for q, d, i in cases
                 for t in ex.prompt_parts(q, d, i) + (ex.build_prompt(q, d, i),)]
        ids = self.encode(texts)  # one process for all: loading the tokenizer takes ~1 s
        for k, (q, d, ins) in enumerate(cases):
            with self.subTest(doc=d[:20]):
                h, dd, s, whole = ids[4 * k:4 * k + 4]
                self.assertEqual(h + dd + s, whole)
                self.assertEqual(s, [151645, 198, 151644, 77091, 198, 151667, 271, 151668, 271])


if __name__ == '__main__':
    unittest.main()
