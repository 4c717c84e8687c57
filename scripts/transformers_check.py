#!/usr/bin/env python3
"""Check rerankd against transformers itself on a tiny random Qwen3 checkpoint.

Two steps, because the machines that have torch + transformers (a lent GPU machine, no
network, no Go) are not the ones that build rerankd:

  make OUT --tokenizer DIR   (on the torch machine) builds a tiny Qwen3ForCausalLM with
                             seeded random weights through transformers, saves it in Hugging
                             Face layout (safetensors, bf16 and fp32, tied and untied) under
                             OUT/<variant>/, and writes the probabilities transformers gives
                             for fixed query-document pairs (the official Qwen3-Reranker
                             prompt, yes/no at the last position) to OUT/expected.json.
                             DIR holds the Qwen3 tokenizer (tokenizer.json and
                             tokenizer_config.json, e.g. ~/.cache/rerankd/tokenizers/...).
  compare OUT --rerankd BIN  (here) converts each variant with `rerankd convert` and scores
                             the same pairs with `rerankd score`, and fails when any
                             probability differs from transformers' by more than --tol.

STATUS: `compare` is tested here (scripts/test_transformers_check.py) against a stand-in for
rerankd; `make` has not run: no machine with transformers has been lent to this project yet.
A device run: carry the tokenizer folder, run `make $OUT/check --tokenizer DIR`, fetch
$OUT, then run `compare` here.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_onnx  # noqa: E402  (prompt constants and helpers, standard library only)

PAIRS = [
    ('What did Caroline do yesterday?', 'Caroline went to the LGBTQ support group yesterday.'),
    ('What did Caroline do yesterday?', 'Melanie painted a sunset over the lake.'),
    ('Wann hat Melanie gemalt?', 'Am 7. Mai malte Melanie einen Sonnenuntergang.'),
    ('卡罗琳昨天做了什么？', '卡罗琳昨天去了支持小组。'),
    ('Any plans? 🙂', 'Planning to apply for counseling certification next month.'),
]
VARIANTS = [  # name, torch dtype, tied embeddings
    ('fp32-tied', 'float32', True),
    ('bf16-tied', 'bfloat16', True),
    ('fp32-untied', 'float32', False),
]


def make(out, tokenizer_dir, seed):
    import torch
    from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM

    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    yes, no = tok.convert_tokens_to_ids('yes'), tok.convert_tokens_to_ids('no')
    expected = {'pairs': [list(p) for p in PAIRS], 'variants': {}}
    for name, dtype, tied in VARIANTS:
        torch.manual_seed(seed)
        cfg = Qwen3Config(vocab_size=len(tok), hidden_size=64, intermediate_size=128,
                          num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                          head_dim=16, max_position_embeddings=4096, rms_norm_eps=1e-6,
                          rope_theta=1e6, tie_word_embeddings=tied)
        model = Qwen3ForCausalLM(cfg).eval()
        for p in model.parameters():  # beyond init's small scale, so scores spread out
            torch.nn.init.normal_(p, std=0.2)
        model = model.to(getattr(torch, dtype))
        path = os.path.join(out, name)
        model.save_pretrained(path, safe_serialization=True)
        tok.save_pretrained(path)
        probs = []
        with torch.no_grad():
            for q, d in PAIRS:
                ids = tok(export_onnx.build_prompt(q, d), return_tensors='pt').input_ids
                logits = model(input_ids=ids).logits[0, -1].float()
                probs.append(torch.softmax(logits[[no, yes]], dim=0)[1].item())
        expected['variants'][name] = probs
    with open(os.path.join(out, 'expected.json'), 'w') as f:
        json.dump(expected, f, indent=1)


def rerankd_probs(rerankd, ckpt, pairs, run=subprocess.run):
    """Converts ckpt with rerankd and returns its probability for each pair."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, 'model')
        r = run([rerankd, 'convert', '--from', ckpt, '--out', folder], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError('rerankd convert %s: %s' % (ckpt, r.stderr.strip()))
        probs = []
        for q, d in pairs:
            r = run([rerankd, 'score', '--model', folder, '--query', q, '--doc', d],
                    capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError('rerankd score: %s' % r.stderr.strip())
            probs.append(json.loads(r.stdout)['scores'][0])
        return probs


def compare(out, rerankd, tol, run=subprocess.run):
    """Returns (worst difference, lines to print); raises on a missing file."""
    with open(os.path.join(out, 'expected.json')) as f:
        expected = json.load(f)
    worst, lines = 0.0, []
    for name, want in sorted(expected['variants'].items()):
        got = rerankd_probs(rerankd, os.path.join(out, name), expected['pairs'], run)
        diff = max(abs(a - b) for a, b in zip(got, want))
        worst = max(worst, diff)
        lines.append('%s: max |rerankd - transformers| %.2e %s' % (name, diff, 'ok' if diff <= tol else 'FAIL'))
    return worst, lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    m = sub.add_parser('make')
    m.add_argument('out')
    m.add_argument('--tokenizer', required=True)
    m.add_argument('--seed', type=int, default=1)
    c = sub.add_parser('compare')
    c.add_argument('out')
    c.add_argument('--rerankd', required=True)
    c.add_argument('--tol', type=float, default=1e-4)
    a = ap.parse_args(argv)
    if a.cmd == 'make':
        make(a.out, a.tokenizer, a.seed)
        return 0
    try:
        worst, lines = compare(a.out, a.rerankd, a.tol)
    except (OSError, RuntimeError, KeyError, ValueError) as e:
        print('transformers_check: %s' % e, file=sys.stderr)
        return 2
    print('\n'.join(lines))
    return 0 if worst <= a.tol else 1


if __name__ == '__main__':
    sys.exit(main())
