"""Standard-library tests of transformers_check.py's compare step (the make step needs torch)."""
import json
import os
import subprocess
import tempfile
import unittest

import transformers_check as tc


class FakeRerankd:
    """Stands in for rerankd: convert succeeds, score answers from a table."""

    def __init__(self, probs, fail=None):
        self.probs, self.fail, self.calls = probs, fail, []

    def __call__(self, args, capture_output=True, text=True):
        self.calls.append(args)
        if self.fail and self.fail in args:
            return subprocess.CompletedProcess(args, 1, '', 'rerankd %s: boom' % self.fail)
        if args[1] == 'convert':
            return subprocess.CompletedProcess(args, 0, '', '')
        q, d = args[args.index('--query') + 1], args[args.index('--doc') + 1]
        return subprocess.CompletedProcess(args, 0, json.dumps({'scores': [self.probs[(q, d)]]}), '')


class CompareTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.want = [0.1 * (i + 1) for i in range(len(tc.PAIRS))]
        with open(os.path.join(self.dir, 'expected.json'), 'w') as f:
            json.dump({'pairs': [list(p) for p in tc.PAIRS], 'variants': {'fp32-tied': self.want}}, f)

    def fake(self, shift=0.0, fail=None):
        return FakeRerankd({p: w + shift for p, w in zip(tc.PAIRS, self.want)}, fail)

    def test_within_tolerance(self):
        run = self.fake(shift=5e-5)
        worst, lines = tc.compare(self.dir, 'rerankd', 1e-4, run)
        self.assertAlmostEqual(worst, 5e-5, places=9)
        self.assertIn('ok', lines[0])
        self.assertEqual(run.calls[0][:3], ['rerankd', 'convert', '--from'])
        self.assertEqual(len(run.calls), 1 + len(tc.PAIRS))

    def test_beyond_tolerance_fails(self):
        worst, lines = tc.compare(self.dir, 'rerankd', 1e-4, self.fake(shift=3e-3))
        self.assertGreater(worst, 1e-4)
        self.assertIn('FAIL', lines[0])

    def test_rerankd_error_is_reported(self):
        with self.assertRaisesRegex(RuntimeError, 'convert'):
            tc.compare(self.dir, 'rerankd', 1e-4, self.fake(fail='convert'))

    def test_cli_exit_codes(self):
        self.assertEqual(tc.main(['compare', os.path.join(self.dir, 'missing'), '--rerankd', 'x']), 2)

    def test_prompt_is_the_official_template(self):
        p = tc.export_onnx.build_prompt('q', 'd')
        self.assertTrue(p.startswith('<|im_start|>system\nJudge whether the Document'))
        self.assertIn('<Query>: q\n<Document>: d<|im_end|>', p)


if __name__ == '__main__':
    unittest.main()
