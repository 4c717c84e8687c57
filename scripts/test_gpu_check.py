"""The dry run of scripts/gpu_check.py end to end on this machine (CPU provider, tiny models).

Needs bin/rerankd and bin/rerankd-bench (make pytest builds them) and the ONNX Runtime library scripts/setup.sh installs;
skipped without them. The torch steps are skipped here unless torch is installed, and must then
say so in the results file.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BIN = os.path.join(ROOT, 'bin', 'rerankd')
CACHE = os.environ.get('RERANKD_CACHE') or os.path.join(
    os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache'), 'rerankd')
ORT = os.environ.get('ORT_LIB') or os.path.join(CACHE, 'onnxruntime', '1.30.0', 'libonnxruntime.so.1')
TOK = os.environ.get('RERANKD_TOKENIZER') or os.path.join(CACHE, 'tokenizers', 'qwen3')


@unittest.skipUnless(os.path.exists(BIN) and os.path.exists(BIN + '-bench') and os.path.exists(ORT),
                     'needs bin/rerankd, bin/rerankd-bench and make setup')
class GPUCheckDryRunTest(unittest.TestCase):
    def run_check(self, *extra):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, 'results.json')
            r = subprocess.run([sys.executable, os.path.join(HERE, 'gpu_check.py'), '--rerankd', BIN, '--ort-lib', ORT,
                                '--tokenizer', TOK, '--work', os.path.join(tmp, 'w'), '--out', out, '--dry-run',
                                '--seconds', '0.3'] + list(extra), capture_output=True, text=True, timeout=900)
            with open(out) as f:
                return r, json.load(f)

    def test_dry_run(self):
        r, res = self.run_check('--steps', 'a,forms,b,d')
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(res['dry_run'])
        by = {s['step']: s for s in res['steps']}
        for step in ('machine', 'models', 'a/qwen3', 'a/qwen3-std', 'a/xlmr', 'a/bert', 'forms/standard', 'forms/shared-prefix'):
            self.assertEqual(by[step]['status'], 'ok', by.get(step))
        for step in ('a/qwen3', 'a/xlmr', 'a/bert'):
            self.assertLessEqual(by[step]['figures']['max_dlogit'], 1e-4)
        self.assertGreater(by['forms/shared-prefix']['figures']['pairs_per_s_8_clients'], 0)
        self.assertEqual(by['forms/attention']['status'], 'skipped')
        for step in ('b', 'd'):  # skipped as a whole, or run per variant when torch is here
            if step in by:
                self.assertEqual(by[step]['status'], 'skipped')
                self.assertTrue(by[step]['detail'].startswith('skipped: '), by[step])
        self.assertNotIn('c', by)  # not asked for

    def test_missing_library_is_skipped_not_failed(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, 'r.json')
            r = subprocess.run([sys.executable, os.path.join(HERE, 'gpu_check.py'), '--rerankd', BIN, '--ort-lib',
                                os.path.join(tmp, 'none.so'), '--tokenizer', TOK, '--work', tmp, '--out', out, '--dry-run'],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn('skipped: no ONNX Runtime library', r.stdout)


if __name__ == '__main__':
    unittest.main()
