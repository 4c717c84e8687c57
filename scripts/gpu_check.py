#!/usr/bin/env python3
"""rerankd on CUDA against itself on CPU and against transformers on the same GPU.

Run by scripts/gpu_check.sh (make gpu-check) on a Linux machine with an NVIDIA GPU, Python with
torch + transformers + sentence-transformers, the CUDA build of ONNX Runtime (make setup-gpu) and
no network. Every model is generated on the machine (rerankd-bench testmodel, or transformers with a
seed): random weights, for agreement and speed, never quality. Steps, each one line or more in
the results file (JSON, one record per step: status ok / FAIL / skipped, figures, detail):

  a  cuda-vs-cpu   rerankd score on CUDA vs on CPU, same library: Qwen3 reranker (standard and
                   shared-prefix forms), XLM-R and BERT cross-encoders: max |dlogit| (TF32 off:
                   target 1e-4). Embedders: skipped (no rerankd command prints vectors).
  6  forms         serve on CUDA, standard vs shared-prefix graph: max |dlogit| vs CPU and
                   pairs/s at 8 clients. The CPU attention form does not run on CUDA (serve
                   keeps it to the CPU), so it is reported as skipped.
  b  transformers  a Qwen3-Reranker-0.6B-shaped checkpoint from transformers (fp32, bf16),
                   converted by rerankd and served on CUDA vs transformers on the same GPU:
                   max |dlogit| and pairs/s at 1, 8, 32 clients, 20-document requests.
  c  export        scripts/export_onnx.py --verify --rerankd end to end on a generated checkpoint.
  d  cross-encoder sentence-transformers CrossEncoder vs rerankd on the XLM-R/BERT checkpoints.

--dry-run: tiny models, the cpu provider standing in for cuda, short loads, clients 1 and 8; the
torch steps run on the CPU when torch is installed and are skipped otherwise. It checks the
script end to end on a CPU-only machine (CI: scripts/test_gpu_check.py). Exit status: 0 when
every step that ran passed (skipped steps do not fail), 1 otherwise, 2 on bad arguments.
"""
import argparse
import concurrent.futures
import glob
import json
import math
import os
import platform
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import export_onnx  # noqa: E402  (prompt helpers, standard library only)

PAIRS = [
    ('What did Caroline do yesterday?', 'Caroline went to the LGBTQ support group yesterday.'),
    ('What did Caroline do yesterday?', 'Melanie painted a sunset over the lake.'),
    ('Wann hat Melanie gemalt?', 'Am 7. Mai malte Melanie einen Sonnenuntergang.'),
    ('Any plans?', 'Planning to apply for counseling certification next month.'),
]
TOKENIZERS = {  # encoder tokenizers in the tree (testmodel writes no vocabulary of its own)
    'xlmr': os.path.join(ROOT, 'tokenizer', 'testdata', 'unigram', 'xlmr-current.json'),
    'bert': os.path.join(ROOT, 'tokenizer', 'testdata', 'wordpiece', 'bert-uncased.json'),
}
# Qwen3-Reranker-0.6B's dimensions
QWEN3_06B = dict(hidden_size=1024, intermediate_size=3072, num_hidden_layers=28, num_attention_heads=16,
                 num_key_value_heads=8, head_dim=128, max_position_embeddings=40960, rms_norm_eps=1e-6,
                 rope_theta=1e6, tie_word_embeddings=True)
QWEN3_TINY = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, head_dim=16, max_position_embeddings=4096, rms_norm_eps=1e-6,
                  rope_theta=1e6, tie_word_embeddings=True)


def logit(p):
    p = min(max(p, 1e-12), 1 - 1e-12)
    return math.log(p / (1 - p))


class Check:
    """Runs the steps and keeps their records."""

    def __init__(self, a):
        self.a, self.records = a, []
        self.provider = 'cpu' if a.dry_run else 'cuda'
        self.size = 'tiny' if a.dry_run else 'full'
        self.clients = [1, 8] if a.dry_run else [1, 8, 32]
        self.env = dict(os.environ)
        self.torch, self.device = None, None

    def record(self, step, status, detail='', **figures):
        r = dict(step=step, status=status, detail=detail, figures=figures)
        self.records.append(r)
        print('%s: %s%s' % (step, detail if status == 'skipped' else status + (': ' + detail if detail else ''),
                              ' ' + json.dumps(figures) if figures else ''), flush=True)

    def rerankd(self, *args, timeout=1800, lib=None):
        env = dict(self.env, ORT_LIB=lib or self.a.ort_lib)
        exe = self.a.bench if args[0] == 'testmodel' else self.a.rerankd  # testmodel is a lab command
        r = subprocess.run([exe] + list(args), capture_output=True, text=True, env=env, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError('rerankd %s: exit %d: %s' % (args[0], r.returncode, r.stderr.strip()[-800:]))
        return r.stdout

    # --- the machine -------------------------------------------------------------------------
    def machine(self):
        info = dict(python=platform.python_version(), rerankd=self.rerankd('version').strip(), ort_lib=self.a.ort_lib,
                    provider=self.provider, size=self.size)
        smi = shutil.which('nvidia-smi')
        if smi:
            r = subprocess.run([smi, '--query-gpu=name,driver_version,memory.total', '--format=csv,noheader'],
                               capture_output=True, text=True)
            info['gpu'] = r.stdout.strip() or r.stderr.strip()
        try:
            import torch
            self.torch = torch
            info['torch'] = torch.__version__
            if torch.cuda.is_available():
                self.device = 'cuda'
                info['torch_cuda'] = torch.version.cuda
            elif self.a.dry_run:
                self.device = 'cpu'
        except ImportError as e:
            info['torch'] = 'missing (%s)' % e
        if not self.a.dry_run and not smi:
            self.record('machine', 'skipped', 'skipped: no NVIDIA GPU (no nvidia-smi); run with --dry-run on a CPU machine', **info)
            return False
        if not os.path.exists(self.a.ort_lib):
            self.record('machine', 'skipped', 'skipped: no ONNX Runtime library at %s (make setup-gpu)' % self.a.ort_lib, **info)
            return False
        self.record('machine', 'ok', **info)
        return True

    def cuda_libs(self):
        """Puts the CUDA 13 / cuDNN 9 libraries of torch's pip wheels on the library path."""
        sp = sysconfig.get_paths()['purelib']
        dirs = sorted(d for d in glob.glob(os.path.join(sp, 'nvidia', '*', 'lib')) + glob.glob(os.path.join(sp, 'nvidia', 'lib')))
        if os.path.isdir('/usr/local/nvidia/lib64'):
            dirs.append('/usr/local/nvidia/lib64')
        if dirs:
            old = self.env.get('LD_LIBRARY_PATH')
            self.env['LD_LIBRARY_PATH'] = ':'.join(dirs + ([old] if old else []))

    # --- models ------------------------------------------------------------------------------
    def models(self):
        w = self.a.work
        out = {}
        t0 = time.time()
        self.rerankd('testmodel', '--out', os.path.join(w, 'qwen3'), '--size', self.size, '--quant', 'none',
                     '--tokenizer', self.a.tokenizer)
        out['qwen3'] = os.path.join(w, 'qwen3')
        self.rerankd('testmodel', '--out', os.path.join(w, 'qwen3-std'), '--size', self.size, '--quant', 'none',
                     '--no-shared-prefix', '--tokenizer', self.a.tokenizer)
        out['qwen3-std'] = os.path.join(w, 'qwen3-std')
        for arch in ('xlmr', 'bert'):
            ckpt = os.path.join(w, arch + '-ckpt')
            size = self.size if arch == 'xlmr' else 'tiny'  # bert: ms-marco-MiniLM-L-6 shape at either size
            self.rerankd('testmodel', '--arch', arch, '--size', size, '--out', ckpt, '--tokenizer', TOKENIZERS[arch])
            self.rerankd('convert', '--from', ckpt, '--out', os.path.join(w, arch), '--quant', 'none')
            out[arch], out[arch + '-ckpt'] = os.path.join(w, arch), ckpt
        self.record('models', 'ok', 'generated with rerankd-bench testmodel, rerankd convert (random weights)', seconds=round(time.time() - t0, 1))
        return out

    # --- a: CUDA vs CPU ----------------------------------------------------------------------
    def score(self, folder, provider, pairs=PAIRS):
        logits = []
        for q, d in pairs:
            out = json.loads(self.rerankd('score', '--model', folder, '--provider', provider, '--query', q, '--doc', d))
            logits.append(out['logits'][0] if 'logits' in out else logit(out['scores'][0]))
        return logits

    def step_a(self, m):
        for name in ('qwen3', 'qwen3-std', 'xlmr', 'bert'):
            try:
                cpu, gpu = self.score(m[name], 'cpu'), self.score(m[name], self.provider)
                d = max(abs(x - y) for x, y in zip(cpu, gpu))
                self.record('a/%s' % name, 'ok' if d <= 1e-4 else 'FAIL', '%s vs cpu, TF32 off' % self.provider, max_dlogit=d)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                self.record('a/%s' % name, 'FAIL', str(e))
        self.record('a/embedders', 'skipped', 'skipped: no rerankd command prints embedding vectors yet')

    # --- serving -----------------------------------------------------------------------------
    def serve(self, folder, *flags):
        with socket.socket() as s:
            s.bind(('127.0.0.1', 0))
            port = s.getsockname()[1]
        env = dict(self.env, ORT_LIB=self.a.ort_lib)
        p = subprocess.Popen([self.a.rerankd, 'serve', '--model', folder, '--provider', self.provider, '--store', 'none',
                              '--addr', '127.0.0.1:%d' % port, '--log-level', 'warn', '--max-documents', '1000'] + list(flags),
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        url = 'http://127.0.0.1:%d' % port
        deadline = time.time() + 600
        while time.time() < deadline:
            if p.poll() is not None:
                raise RuntimeError('serve exited %d: %s' % (p.returncode, p.stderr.read()[-800:]))
            try:
                with urllib.request.urlopen(url + '/ready', timeout=2) as r:
                    if r.status == 200:
                        return p, url
            except OSError:
                time.sleep(0.5)
        p.kill()
        raise RuntimeError('serve not ready in 600 s')

    @staticmethod
    def rerank(url, query, docs):
        body = json.dumps({'query': query, 'documents': docs}).encode()
        req = urllib.request.Request(url + '/v1/rerank', body, {'Content-Type': 'application/json'})
        with urllib.request.urlopen(req, timeout=300) as r:
            res = json.load(r)['results']
        out = [0.0] * len(docs)
        for x in res:
            out[x['index']] = logit(x['relevance_score'])
        return out

    def served_logits(self, url, pairs=PAIRS):
        return [self.rerank(url, q, [d])[0] for q, d in pairs]

    def load(self, call, clients):
        """pairs/s of call() (one 20-document request) from `clients` threads for --seconds."""
        stop, done = time.time() + self.a.seconds, [0]

        def worker():
            n = 0
            while time.time() < stop:
                call()
                n += 20
            return n

        t0 = time.time()
        with concurrent.futures.ThreadPoolExecutor(clients) as ex:
            done = sum(f.result() for f in [ex.submit(worker) for _ in range(clients)])
        return done / (time.time() - t0)

    def docs20(self):
        return [PAIRS[i % len(PAIRS)][1] + ' (memory %d, noted on day %d)' % (i, 3 * i) for i in range(20)]

    def step_forms(self, m, cpu_logits):
        for name, folder in (('standard', m['qwen3-std']), ('shared-prefix', m['qwen3'])):
            try:
                p, url = self.serve(folder)
                try:
                    d = max(abs(x - y) for x, y in zip(self.served_logits(url), cpu_logits))
                    docs = self.docs20()
                    pps = self.load(lambda: self.rerank(url, PAIRS[0][0], docs), 8)
                finally:
                    p.terminate()
                    p.wait()
                self.record('forms/%s' % name, 'ok' if d <= 1e-4 else 'FAIL', 'serve on %s' % self.provider,
                            max_dlogit_vs_cpu=d, pairs_per_s_8_clients=round(pps, 1))
            except (RuntimeError, OSError) as e:
                self.record('forms/%s' % name, 'FAIL', str(e))
        self.record('forms/attention', 'skipped', 'skipped: serve runs the attention form on the CPU only')

    # --- b: transformers on the same GPU -----------------------------------------------------
    def qwen3_checkpoint(self, dtype):
        torch = self.torch
        from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM
        tok = AutoTokenizer.from_pretrained(self.a.tokenizer)
        torch.manual_seed(self.a.seed)
        cfg = Qwen3Config(vocab_size=len(tok), torch_dtype=dtype, **(QWEN3_TINY if self.a.dry_run else QWEN3_06B))
        model = Qwen3ForCausalLM(cfg).to(self.device)
        with torch.no_grad():
            for p in model.parameters():  # spread scores beyond init's small scale
                p.normal_(0, 0.02 if not self.a.dry_run else 0.2)
        model = model.to(getattr(torch, dtype)).eval()
        path = os.path.join(self.a.work, 'hf-qwen3-' + dtype)
        model.save_pretrained(path, safe_serialization=True)
        tok.save_pretrained(path)
        return model, tok, path

    def hf_logits(self, model, tok, pairs):
        torch = self.torch
        yes, no = tok.convert_tokens_to_ids('yes'), tok.convert_tokens_to_ids('no')
        tok.padding_side = 'left'
        prompts = [export_onnx.build_prompt(q, d) for q, d in pairs]
        with torch.no_grad():
            enc = tok(prompts, return_tensors='pt', padding=True).to(self.device)
            last = model(**enc).logits[:, -1].float()
        return (last[:, yes] - last[:, no]).tolist()

    def step_b(self):
        if self.torch is None or self.device is None:
            self.record('b', 'skipped', 'skipped: no torch%s' % ('' if self.torch is None else ' with CUDA'))
            return
        try:
            import transformers  # noqa: F401
        except ImportError as e:
            self.record('b', 'skipped', 'skipped: no transformers (%s)' % e)
            return
        for dtype in ('float32', 'bfloat16'):
            try:
                model, tok, path = self.qwen3_checkpoint(dtype)
                folder = path + '-rerankd'
                self.rerankd('convert', '--from', path, '--out', folder, '--quant', 'none')
                want = self.hf_logits(model, tok, PAIRS)
                docs = self.docs20()
                hf = {c: round(self.load(lambda: self.hf_logits(model, tok, [(PAIRS[0][0], d) for d in docs]), c), 1)
                      for c in self.clients}
                p, url = self.serve(folder)
                try:
                    got = self.served_logits(url)
                    rd = {c: round(self.load(lambda: self.rerank(url, PAIRS[0][0], docs), c), 1) for c in self.clients}
                finally:
                    p.terminate()
                    p.wait()
                d = max(abs(x - y) for x, y in zip(got, want))
                tol = 1e-3 if dtype == 'float32' else 5e-2
                self.record('b/%s' % dtype, 'ok' if d <= tol else 'FAIL', 'rerankd on %s vs transformers on %s, same safetensors'
                            % (self.provider, self.device), max_dlogit=d, tol=tol, rerankd_pairs_per_s=rd,
                            transformers_pairs_per_s=hf, ratio={c: round(rd[c] / hf[c], 2) for c in self.clients})
                del model
            except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as e:
                self.record('b/%s' % dtype, 'FAIL', str(e))

    # --- c: export_onnx.py --verify ----------------------------------------------------------
    def step_c(self):
        try:
            import onnx  # noqa: F401
            import onnxruntime  # noqa: F401
            import transformers  # noqa: F401
        except ImportError as e:
            self.record('c', 'skipped', 'skipped: export_onnx.py needs torch, transformers, onnx, onnxruntime (%s)' % e)
            return
        ckpt = os.path.join(self.a.work, 'hf-qwen3-float32')
        if not os.path.isdir(ckpt):
            self.record('c', 'skipped', 'skipped: no generated checkpoint (step b did not run)')
            return
        r = subprocess.run([sys.executable, os.path.join(HERE, 'export_onnx.py'), '--model', ckpt, '--out',
                            os.path.join(self.a.work, 'export'), '--verify', '--device', self.device, '--rerankd', self.a.rerankd],
                           capture_output=True, text=True, env=dict(self.env, ORT_LIB=self.a.ort_lib), timeout=1800)
        self.record('c', 'ok' if r.returncode == 0 else 'FAIL', (r.stdout + r.stderr).strip()[-600:])

    # --- d: sentence-transformers CrossEncoder -----------------------------------------------
    def step_d(self, m):
        try:
            from sentence_transformers import CrossEncoder
        except ImportError as e:
            self.record('d', 'skipped', 'skipped: no sentence-transformers (%s)' % e)
            return
        if self.device is None:
            self.record('d', 'skipped', 'skipped: no torch device')
            return
        for arch in ('xlmr', 'bert'):
            try:
                ce = CrossEncoder(m[arch + '-ckpt'], device=self.device, activation_fn=self.torch.nn.Identity())
                want = [float(x) for x in ce.predict(PAIRS)]
                got = self.score(m[arch], self.provider)
                d = max(abs(x - y) for x, y in zip(got, want))
                self.record('d/%s' % arch, 'ok' if d <= 1e-3 else 'FAIL', 'CrossEncoder on %s vs rerankd on %s' % (self.device, self.provider),
                            max_dlogit=d)
            except (RuntimeError, OSError, ValueError, TypeError) as e:
                self.record('d/%s' % arch, 'FAIL', str(e))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--rerankd', required=True, help='the rerankd binary')
    ap.add_argument('--bench', default=None, help='the rerankd-bench binary (testmodel); default: beside --rerankd')
    ap.add_argument('--ort-lib', required=True, help="ONNX Runtime's CUDA build (make setup-gpu prints it)")
    ap.add_argument('--tokenizer', required=True, help='Qwen3 tokenizer folder (make setup)')
    ap.add_argument('--work', required=True, help='scratch folder for generated models (several GB at full size)')
    ap.add_argument('--out', required=True, help='results file (JSON)')
    ap.add_argument('--dry-run', action='store_true', help='tiny models, cpu provider: the script end to end on a CPU machine')
    ap.add_argument('--seconds', type=float, default=10, help='seconds per load level')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--steps', default='a,forms,b,c,d', help='comma-separated steps to run')
    a = ap.parse_args(argv)
    if a.bench is None:
        a.bench = os.path.join(os.path.dirname(os.path.abspath(a.rerankd)), 'rerankd-bench')
    if a.dry_run and a.seconds == 10:
        a.seconds = 1
    os.makedirs(a.work, exist_ok=True)
    c = Check(a)
    steps = set(a.steps.split(','))
    t0 = time.time()
    try:
        if c.machine():
            c.cuda_libs()
            m = c.models()
            if 'a' in steps:
                c.step_a(m)
            if 'forms' in steps:
                c.step_forms(m, c.score(m['qwen3-std'], 'cpu'))
            if 'b' in steps:
                c.step_b()
            if 'c' in steps:
                c.step_c()
            if 'd' in steps:
                c.step_d(m)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        c.record('run', 'FAIL', str(e))
    with open(a.out, 'w') as f:
        json.dump(dict(dry_run=a.dry_run, seconds=round(time.time() - t0, 1), steps=c.records), f, indent=1)
    print('gpu-check: results in %s (%.0f s)' % (a.out, time.time() - t0))
    return 1 if any(r['status'] == 'FAIL' for r in c.records) else 0


if __name__ == '__main__':
    sys.exit(main())
