#!/usr/bin/env python3
"""Export a Qwen3-Reranker-architecture cross-encoder to ONNX for rerankd.

Works for Qwen/Qwen3-Reranker-0.6B/4B/8B and checkpoints of the same architecture
(e.g. MemReranker). Needs torch + transformers + onnx (+ onnxruntime for --verify and
--quantize); everything heavy is imported lazily, so the pure helpers below (and their unit
tests, scripts/test_export_onnx.py) run with the standard library alone.

STATUS: this script has not been run end to end here (no torch/transformers/onnx in the
development machine); it awaits a run on a machine with transformers. Use --verify.

ONNX contract of the exported model.onnx:
  inputs   input_ids      int64 [batch, seq]   RIGHT-padded: real tokens first, pads after
           attention_mask int64 [batch, seq]   1 for real tokens, 0 for pads
  output   logits         float32 [batch]      logit(yes) - logit(no) at the last real token
  score = sigmoid(logits), equal to softmax([no, yes])[yes] of the full model.
Inside the graph: position_ids = arange(seq) for every row (cumsum of ones - 1). With right
padding the real tokens therefore get positions 0..n-1, exactly as when scored alone; pads
come after every real token, so causal attention never lets a real token see them. The
attention mask is a 4D additive causal+padding mask built from attention_mask. The head is
folded: h_last . (W[yes] - W[no]), W = lm_head weight (tied to embed_tokens in 0.6B),
h_last = final-norm hidden state at index attention_mask.sum(1) - 1; full-vocabulary logits
are never computed. yes/no ids come from the tokenizer, never hard-coded.

fp16: with --device cuda the weights are halved in torch before export (RoPE frequencies and
the head stay fp32); with --device cpu the fp32 graph is converted by onnxconverter-common,
which also halves the RoPE frequencies (less accurate at long lengths; prefer cuda). fp16
graphs may not run on onnxruntime's CPU provider. int8 is onnxruntime's dynamic MatMul
quantization, whose activation scale is per tensor: a document's score then depends slightly
on the other documents of its batch. `rerankd convert --quant int8` writes rerankd's own int8
variant from the same Hugging Face checkpoint (per-row activation scales, batch-independent,
with a shared-prefix graph); prefer it where Go's converter can read the checkpoint.
--rerankd BIN runs that converter on the same checkpoint into OUT/rerankd, and --verify then
checks its graphs (plain and shared-prefix, fp32 and int8) against the same reference.

Output folder: model.onnx (+ model.onnx.data, one external file, when the weights exceed
the 2 GB protobuf limit), optional model.int8.onnx, config.json, tokenizer.json,
tokenizer_config.json. metadata_props: source, revision, head=logit, yes/no ids, producer.
"""
import argparse
import gc
import inspect
import json
import math
import os
import shutil
import sys
import tempfile

PREFIX = ('<|im_start|>system\nJudge whether the Document meets the requirements based on the '
          'Query and the Instruct provided. Note that the answer can only be "yes" or "no".'
          '<|im_end|>\n<|im_start|>user\n')
SUFFIX = '<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n'
DEFAULT_INSTRUCTION = 'Given a web search query, retrieve relevant passages that answer the query'
PRODUCER = 'rerankd export_onnx.py'
INSTALL_HINT = 'pip install torch transformers onnx onnxruntime'
PROTOBUF_LIMIT = 2**31 - 1          # bytes; one ModelProto cannot be larger
GRAPH_HEADROOM = 64 * 2**20         # room for the graph itself next to the weights
ONNX_INT64, ONNX_FLOAT = 7, 1       # onnx.TensorProto.INT64 / FLOAT
LOOSE_ATOL = {'fp16': 2e-2, 'int8': 1e-1}   # floors for reduced-precision models

_LONG_DOC = ' '.join(
    'Entry %d: the agent noted that the user prefers morning meetings, dislikes long email '
    'threads, and keeps project notes in a shared wiki that is reviewed every Friday.' % i
    for i in range(40))
BUILTIN_PAIRS = [  # (query, document, instruction); mixed lengths, one long document
    ('What is the capital of China?', 'The capital of China is Beijing.', None),
    ('What is the capital of China?', 'Gravity pulls objects toward the Earth.', None),
    ('Explain gravity', 'Gravity is a force that attracts two bodies towards each other. It '
     'gives weight to physical objects and is responsible for the movement of planets '
     'around the sun.', None),
    ('What did Caroline do at the support group?',
     'Caroline: I went to an LGBTQ support group yesterday and it was so powerful.', None),
    ('When does the user like to have meetings?', _LONG_DOC, None),
    ('记忆系统需要知道哪些用户偏好？', '用户喜欢在早上开会，不喜欢很长的邮件讨论。', None),
    ('Which database did the team choose?', 'ok', None),
    ('Which database did the team choose?', 'We decided to use PostgreSQL for the event '
     'store because it supports JSONB and logical replication.',
     'Given a question about past decisions, retrieve the memory that answers it'),
]


# ---------------------------------------------------------------- pure helpers (stdlib only)

def build_prompt(query, doc, instruction=None):
    """Full Qwen3-Reranker prompt for one pair."""
    return ''.join(prompt_parts(query, doc, instruction))


def prompt_parts(query, doc, instruction=None):
    """(head, document, suffix) whose concatenation is the prompt.

    The split is after "<Document>:" so that the document part starts with its space: the
    Qwen pre-tokenizer always breaks between ':' and a following space, so encoding the parts
    separately gives the same ids as encoding the whole prompt (checked again in --verify).
    """
    instruction = DEFAULT_INSTRUCTION if instruction is None else instruction
    head = '%s<Instruct>: %s\n<Query>: %s\n<Document>:' % (PREFIX, instruction, query)
    return head, ' ' + doc, SUFFIX


def truncate_doc(head_ids, doc_ids, suffix_ids, max_length):
    """Join the parts, shortening only the document to fit max_length tokens.

    Returns (ids, n_removed). The template and query are never cut: if they alone leave no
    room for at least one document token, ValueError.
    """
    fixed = len(head_ids) + len(suffix_ids)
    need = fixed + (1 if doc_ids else 0)
    if need > max_length:
        raise ValueError('max length %d is too small: template + query take %d tokens'
                         % (max_length, fixed))
    keep = min(len(doc_ids), max_length - fixed)
    return list(head_ids) + list(doc_ids[:keep]) + list(suffix_ids), len(doc_ids) - keep


def right_pad(seqs, pad_id):
    """Right-pad id lists to one length: (ids, mask) as lists of lists."""
    if not seqs:
        raise ValueError('no sequences')
    if any(len(s) == 0 for s in seqs):
        raise ValueError('empty sequence: every row needs at least one real token')
    width = max(len(s) for s in seqs)
    ids = [list(s) + [pad_id] * (width - len(s)) for s in seqs]
    mask = [[1] * len(s) + [0] * (width - len(s)) for s in seqs]
    return ids, mask


def last_real_index(mask):
    """Index of the last real token of each right-padded mask row (sum(row) - 1)."""
    out = []
    for i, row in enumerate(mask):
        n = sum(row)
        if n == 0 or list(row) != [1] * n + [0] * (len(row) - n):
            raise ValueError('mask row %d is not right-padded 1..1 0..0 with a real token: %r'
                             % (i, list(row)))
        out.append(n - 1)
    return out


def parse_pairs(lines, source='<pairs>'):
    """Parse JSONL lines of {"query", "document"[, "instruction"]} (other keys ignored).

    Blank lines are skipped. All bad lines are reported in one ValueError, each with its
    line number. Returns a list of (query, document, instruction-or-None).
    """
    pairs, errors = [], []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            errors.append('%s:%d: invalid JSON (%s)' % (source, n, e))
            continue
        if not isinstance(obj, dict):
            errors.append('%s:%d: expected a JSON object' % (source, n))
            continue
        bad = [k for k in ('query', 'document') if not isinstance(obj.get(k), str)]
        bad += [k for k in ('instruction',) if k in obj and not isinstance(obj[k], str)]
        if bad:
            errors.append('%s:%d: %s must be a string' % (source, n, ', '.join(bad)))
        elif not obj['query'].strip():
            errors.append('%s:%d: query is empty' % (source, n))
        else:
            pairs.append((obj['query'], obj['document'], obj.get('instruction')))
    if not pairs and not errors:
        errors.append('%s: no pairs' % source)
    if errors:
        raise ValueError('\n'.join(errors))
    return pairs


def validate_args(a):
    """Every problem with the parsed arguments, as a list of messages (empty = fine)."""
    out = (a.out or '').strip()
    checks = [
        (not (a.model or '').strip(), '--model is required (a Hugging Face id or a local folder)'),
        (not out, '--out is required'),
        (out and os.path.exists(out) and not os.path.isdir(out),
         '--out %s exists and is not a folder' % out),
        (not 14 <= a.opset <= 23, '--opset must be between 14 and 23, got %d' % a.opset),
        (a.dynamo and a.opset < 18, '--dynamo needs --opset 18 or higher'),
        (a.dtype not in ('fp32', 'fp16'), '--dtype must be fp32 or fp16'),
        (a.quantize not in (None, 'int8'), '--quantize must be int8'),
        (a.quantize and a.dtype != 'fp32', '--quantize int8 needs --dtype fp32 (it quantizes '
                                           'the fp32 model)'),
        (a.max_length < 1, '--max-length must be positive, got %d' % a.max_length),
        (not (a.atol > 0 and math.isfinite(a.atol)),
         '--atol must be a positive number, got %r' % a.atol),
        (a.device not in ('cpu', 'cuda'), '--device must be cpu or cuda'),
        (a.pairs and not a.verify, '--pairs only makes sense with --verify'),
        (a.pairs and not os.path.isfile(a.pairs), '--pairs %s: no such file' % a.pairs),
        (a.rerankd and not (os.path.isfile(a.rerankd) and os.access(a.rerankd, os.X_OK)),
         '--rerankd %s: not an executable file (build it with make build: bin/rerankd)'
         % a.rerankd),
    ]
    return [msg for bad, msg in checks if bad]


def sigmoid(x):
    """Numerically stable logistic function."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def compare_scores(ref, got):
    """(max abs error, mean abs error) between two equal-length score lists; NaN -> inf."""
    if len(ref) != len(got) or not ref:
        raise ValueError('cannot compare %d scores with %d' % (len(ref), len(got)))
    errs = [abs(r - g) for r, g in zip(ref, got)]
    errs = [math.inf if math.isnan(e) else e for e in errs]
    return max(errs), sum(errs) / len(errs)


def tolerance_for(kind, atol):
    """(tolerance, loosened?) for a model kind: fp32 uses atol, fp16/int8 a looser floor."""
    floor = LOOSE_ATOL.get(kind)
    if floor is None or atol >= floor:
        return atol, False
    return floor, True


def needs_external_data(tensor_bytes, limit=PROTOBUF_LIMIT, headroom=GRAPH_HEADROOM):
    """Whether weights of this size must go to an external data file."""
    return tensor_bytes + headroom > limit


def metadata_props(source, revision, yes_id, no_id, dtype):
    """metadata_props written into the exported model (all values strings)."""
    return {'producer': PRODUCER, 'source': source, 'revision': revision or 'unknown',
            'head': 'logit', 'yes_token_id': str(yes_id), 'no_token_id': str(no_id),
            'padding': 'right', 'position_ids': 'arange', 'dtype': dtype}


def contract_problems(inputs, outputs):
    """Differences from the I/O contract; inputs/outputs are [(name, elem_type, dims)]."""
    want_in = [('input_ids', ONNX_INT64, ['batch', 'seq']),
               ('attention_mask', ONNX_INT64, ['batch', 'seq'])]
    want_out = [('logits', ONNX_FLOAT, ['batch'])]
    p = []
    for kind, got, want in (('inputs', inputs, want_in), ('outputs', outputs, want_out)):
        got = [(n, t, list(d)) for n, t, d in got]
        if got != want:
            p.append('%s are %r, want %r' % (kind, got, want))
    return p


def check_yes_no(yes_id, no_id, unk_id):
    """Raise ValueError unless "yes" and "no" are two distinct known tokens."""
    for name, v in (('yes', yes_id), ('no', no_id)):
        if not isinstance(v, int) or v < 0 or v == unk_id:
            raise ValueError('tokenizer has no single token %r (got %r)' % (name, v))
    if yes_id == no_id:
        raise ValueError('"yes" and "no" map to the same id %d' % yes_id)


def prefix_groups(keys):
    """Indices grouped by equal key (a pair's query and instruction), in first-seen order."""
    groups = {}
    for i, k in enumerate(keys):
        groups.setdefault(k, []).append(i)
    return list(groups.values())


def shared_prefix_feeds(seqs):
    """Inputs of rerankd's shared-prefix graph for sequences that start alike.

    Returns (prefix_ids, packed_ids, mask): the longest common start, at most one token short
    of the shortest sequence (every row scores its own last token) and at least one token (the
    graph needs a prefix); each row's remaining tokens packed one after the other; and the
    right-padded [rows, longest remainder] mask that gives their layout (model/onnx/prefix.go).
    """
    if not seqs:
        raise ValueError('no sequences')
    if any(len(q) < 2 for q in seqs):
        raise ValueError('every sequence needs at least 2 tokens (a prefix and its own last)')
    n = min(len(q) for q in seqs) - 1
    for q in seqs[1:]:
        k = 0
        while k < n and q[k] == seqs[0][k]:
            k += 1
        n = k
    if n < 1:
        raise ValueError('the sequences share no first token')
    rest = [list(q[n:]) for q in seqs]
    width = max(len(r) for r in rest)
    packed = [t for r in rest for t in r]
    mask = [[1] * len(r) + [0] * (width - len(r)) for r in rest]
    return list(seqs[0][:n]), packed, mask


def rerankd_convert_cmd(binary, model, revision, out):
    """argv of `rerankd convert` for the same checkpoint (a folder or a hub id)."""
    cmd = [binary, 'convert', '--from', model, '--out', out]
    if revision:
        cmd += ['--revision', revision]
    return cmd


def rerankd_models(folder):
    """(label, tolerance kind, path, layout) of each graph `rerankd convert` wrote to folder."""
    found = []
    for name, kind, layout in (('model.onnx', 'fp32', 'plain'),
                               ('shared_prefix.onnx', 'fp32', 'shared'),
                               ('model.int8.onnx', 'int8', 'plain'),
                               ('shared_prefix.int8.onnx', 'int8', 'shared')):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            found.append(('rerankd ' + name, kind, path, layout))
    return found


# ---------------------------------------------------------------- heavy parts (torch, onnx)

def _import(names):
    mods = []
    for n in names:
        try:
            mods.append(__import__(n, fromlist=['_']))
        except ImportError:
            sys.exit('error: %s is not installed; %s' % (n, INSTALL_HINT))
    return mods


def encode_pairs(tok, pairs, max_length):
    """Token ids per pair (document truncated to fit), checked against whole-prompt encoding."""
    out = []
    enc = lambda s: tok(s, add_special_tokens=False)['input_ids']
    for q, d, ins in pairs:
        head, doc, suf = prompt_parts(q, d, ins)
        ids, cut = truncate_doc(enc(head), enc(doc), enc(suf), max_length)
        if cut:
            print('note: document of %r truncated by %d tokens' % (q[:40], cut))
        elif ids != enc(build_prompt(q, d, ins)):
            print('warning: split encoding differs from whole-prompt encoding for %r' % q[:40])
        out.append(ids)
    return out


def make_wrapper(torch, causal_lm, yes_id, no_id):
    """nn.Module: (input_ids, attention_mask) -> float32 folded yes-no logit per row."""
    w = causal_lm.get_output_embeddings().weight.detach()  # [vocab, hidden]; only 2 rows used

    class FoldedReranker(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.base = causal_lm.model
            self.register_buffer('w_diff', w[yes_id].float() - w[no_id].float())

        def forward(self, input_ids, attention_mask):
            dt = self.base.embed_tokens.weight.dtype
            pos = torch.ones_like(attention_mask).cumsum(1) - 1          # arange(seq) per row
            causal = pos.unsqueeze(1) <= pos.unsqueeze(2)                # [b, q, k]: k <= q
            allowed = causal & attention_mask.bool().unsqueeze(1)        # key is a real token
            mask4d = (~allowed).unsqueeze(1).to(dt) * torch.finfo(dt).min
            hidden = self.base(input_ids=input_ids, attention_mask=mask4d,
                               position_ids=pos, use_cache=False).last_hidden_state
            last = (attention_mask.sum(1) - 1).clamp(min=0)
            idx = last.view(-1, 1, 1).expand(-1, 1, hidden.shape[-1])
            h = torch.gather(hidden, 1, idx).squeeze(1).float()
            return h @ self.w_diff

    return FoldedReranker().eval()


def reference_scores(torch, transformers, args, tok, ids_list, yes_id, no_id):
    """P(yes) as the official model card computes it: left padding, full lm_head logits."""
    model = transformers.AutoModelForCausalLM.from_pretrained(
        args.model, revision=args.revision).float().to(args.device).eval()
    side, tok.padding_side = tok.padding_side, 'left'
    try:
        batch = tok.pad({'input_ids': ids_list}, padding=True, return_tensors='pt')
    finally:
        tok.padding_side = side
    with torch.no_grad():
        logits = model(**{k: v.to(args.device) for k, v in batch.items()}).logits[:, -1, :]
        two = torch.stack([logits[:, no_id], logits[:, yes_id]], dim=1).float()
        scores = torch.nn.functional.log_softmax(two, dim=1)[:, 1].exp().tolist()
    del model
    gc.collect()
    return scores


def set_metadata(m, meta):
    del m.metadata_props[:]
    for k, v in meta.items():
        m.metadata_props.add(key=k, value=v)


def finalize(onnx, tmp_path, out_path, meta):
    """Load the raw export, name dims, add metadata, save (external data if large), check."""
    m = onnx.load(tmp_path)
    for vs, names in ((m.graph.input, ['batch', 'seq']), (m.graph.output, ['batch'])):
        for v in vs:  # name symbolic dims as the contract says; fixed dims stay (and fail)
            for d, name in zip(v.type.tensor_type.shape.dim, names):
                if d.HasField('dim_param'):
                    d.dim_param = name
    set_metadata(m, meta)
    io = lambda vs: [(v.name, v.type.tensor_type.elem_type, [d.dim_param or d.dim_value
                      for d in v.type.tensor_type.shape.dim]) for v in vs]
    problems = contract_problems(io(m.graph.input), io(m.graph.output))
    if problems:
        sys.exit('error: exported graph breaks the I/O contract: ' + '; '.join(problems))
    data = out_path + '.data'
    if os.path.exists(data):
        os.remove(data)  # onnx appends to an existing data file
    nbytes = sum(len(t.raw_data) or 4 * len(t.float_data) for t in m.graph.initializer)
    external = needs_external_data(nbytes)
    onnx.save_model(m, out_path, save_as_external_data=external, all_tensors_to_one_file=True,
                    location=os.path.basename(data), size_threshold=1024)
    onnx.checker.check_model(out_path)
    print('wrote %s (%.1f MB of weights%s)' % (out_path, nbytes / 1e6,
                                             ', external data ' + data if external else ''))
    return nbytes


def export(torch, args, wrapper, path):
    ids, mask = (torch.tensor(x, device=args.device)  # two rows, one padded: no 0/1 batch
                 for x in right_pad([list(range(11, 19)), list(range(21, 26))], 0))
    kw = dict(input_names=['input_ids', 'attention_mask'], output_names=['logits'],
              opset_version=args.opset, do_constant_folding=True,
              dynamic_axes={'input_ids': {0: 'batch', 1: 'seq'},
                            'attention_mask': {0: 'batch', 1: 'seq'}, 'logits': {0: 'batch'}})
    if 'dynamo' in inspect.signature(torch.onnx.export).parameters:
        kw['dynamo'] = bool(args.dynamo)
    elif args.dynamo:
        sys.exit('error: this torch has no dynamo ONNX exporter; drop --dynamo')
    with torch.no_grad():
        torch.onnx.export(wrapper, (ids, mask), path, **kw)


def copy_side_files(args, out):
    for name in ('config.json', 'tokenizer.json', 'tokenizer_config.json'):
        if os.path.isdir(args.model):
            src = os.path.join(args.model, name)
        else:
            from huggingface_hub import hf_hub_download
            try:
                src = hf_hub_download(args.model, name, revision=args.revision)
            except Exception as e:  # e.g. a repository without tokenizer.json
                sys.exit('error: cannot fetch %s from %s: %s' % (name, args.model, e))
        if not os.path.isfile(src):
            sys.exit('error: %s not found in %s' % (name, args.model))
        shutil.copyfile(src, os.path.join(out, name))


def ort_scores(ort, np, path, ids_list, pad_id, device):
    providers = ['CPUExecutionProvider']
    if device == 'cuda':
        if 'CUDAExecutionProvider' not in ort.get_available_providers():
            print('warning: onnxruntime has no CUDA provider here; verifying on CPU')
        providers.insert(0, 'CUDAExecutionProvider')
    sess = ort.InferenceSession(path, providers=providers)
    run = lambda seqs: sess.run(['logits'], dict(zip(
        ('input_ids', 'attention_mask'),
        (np.asarray(x, dtype=np.int64) for x in right_pad(seqs, pad_id)))))[0].tolist()
    batched = [sigmoid(x) for x in run(ids_list)]
    alone = [sigmoid(run([s])[0]) for s in ids_list]
    return batched, alone


def checkpoint_source(model, revision):
    """What `rerankd convert --from` should read: the folder itself, or the hub snapshot that
    transformers already downloaded (huggingface_hub's cache: no second download of the
    weights), or, when huggingface_hub is missing or fails, the hub id for rerankd to fetch."""
    if os.path.isdir(model):
        return model
    try:
        from huggingface_hub import snapshot_download
        return snapshot_download(model, revision=revision, allow_patterns=[
            '*.json', '*.safetensors', '1_Pooling/*'])
    except Exception as e:  # ImportError, offline, gated repo: rerankd's downloader tries
        print('note: no local snapshot of %s (%s); rerankd convert downloads it' % (model, e))
        return model


def ort_shared_scores(ort, np, path, ids_list, keys, device):
    """Scores through a shared-prefix graph: each group of pairs with the same query and
    instruction in one call, and every pair alone (batch invariance), no past K/V."""
    providers = ['CPUExecutionProvider']
    if device == 'cuda':
        providers.insert(0, 'CUDAExecutionProvider')
    sess = ort.InferenceSession(path, providers=providers)
    past = {i.name: i.shape for i in sess.get_inputs() if i.name in ('past_key', 'past_value')}

    def run(seqs):
        prefix, packed, mask = shared_prefix_feeds(seqs)
        feeds = {'prefix_ids': np.asarray(prefix, dtype=np.int64),
                 'input_ids': np.asarray(packed, dtype=np.int64),
                 'attention_mask': np.asarray(mask, dtype=np.int64)}
        for name, shape in past.items():  # [layers, kv_heads, past=0, head_dim]
            feeds[name] = np.zeros([d if isinstance(d, int) else 0 for d in shape], np.float32)
        return sess.run(['logits'], feeds)[0].tolist()

    batched = [0.0] * len(ids_list)
    for group in prefix_groups(keys):
        for i, x in zip(group, run([ids_list[i] for i in group])):
            batched[i] = sigmoid(x)
    alone = [sigmoid(run([s])[0]) for s in ids_list]
    return batched, alone


def verify(args, models, ref, ids_list, pad_id, torch_scores, keys=None):
    ort, np = _import(['onnxruntime', 'numpy'])
    ok = True
    if torch_scores is not None:
        mx, mean = compare_scores(ref, torch_scores)
        print('torch folded head vs reference: max %.2e mean %.2e' % (mx, mean))
    for entry in models:  # (kind, path) or (label, kind, path, layout)
        label, kind, path, layout = entry if len(entry) == 4 else (entry[0], entry[0], entry[1],
                                                                   'plain')
        tol, loose = tolerance_for(kind, args.atol)
        if loose:
            print('warning: %s model: tolerance loosened to %g (reduced precision)' % (label, tol))
        try:
            if layout == 'shared':
                batched, alone = ort_shared_scores(ort, np, path, ids_list, keys, args.device)
            else:
                batched, alone = ort_scores(ort, np, path, ids_list, pad_id, args.device)
        except Exception as e:  # e.g. fp16 kernels missing on the CPU provider
            print('FAIL %s: onnxruntime could not run %s: %s%s' % (
                label, path, e, ' (fp16 needs --device cuda)' if kind == 'fp16' else ''))
            ok = False
            continue
        for what, got in (('vs reference', batched), ('batch invariance', alone)):
            mx, mean = compare_scores(ref if what == 'vs reference' else batched, got)
            good = mx <= tol
            ok &= good
            print('%s %s %s: max abs %.2e mean abs %.2e (tol %g)'
                  % ('ok  ' if good else 'FAIL', label, what, mx, mean, tol))
        for i, (r, b) in enumerate(zip(ref, batched)):
            print('  pair %d: reference %.5f onnx %.5f' % (i, r, b))
    return ok


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--model', required=True, help='Hugging Face id or local folder')
    ap.add_argument('--revision', default=None, help='hub revision (branch, tag or commit)')
    ap.add_argument('--out', required=True, help='output folder')
    ap.add_argument('--opset', type=int, default=18)
    ap.add_argument('--dtype', default='fp32', choices=['fp32', 'fp16'])
    ap.add_argument('--quantize', default=None, choices=['int8'])
    ap.add_argument('--max-length', type=int, default=8192, help='token limit for --verify pairs')
    ap.add_argument('--verify', action='store_true')
    ap.add_argument('--pairs', default=None, help='JSONL of {"query","document"[,"instruction"]}')
    ap.add_argument('--atol', type=float, default=1e-3)
    ap.add_argument('--device', default='cpu', choices=['cpu', 'cuda'])
    ap.add_argument('--dynamo', action='store_true', help='use the torch.export-based exporter')
    ap.add_argument('--rerankd', default=None, metavar='BIN',
                    help="also write rerankd's own graphs (shared-prefix, int8) to OUT/rerankd "
                         "with `BIN convert` on the same checkpoint; --verify checks them too")
    args = ap.parse_args(argv)
    problems = validate_args(args)
    if problems:
        ap.error('\n  '.join([''] + problems))
    pairs = BUILTIN_PAIRS
    if args.pairs:
        with open(args.pairs, encoding='utf-8') as f:
            try:
                pairs = parse_pairs(f, args.pairs)
            except ValueError as e:
                sys.exit('error: bad --pairs file:\n' + str(e))

    extra = ['onnxruntime', 'numpy'] if args.verify or args.quantize else []
    torch, transformers, onnx = _import(['torch', 'transformers', 'onnx'] + extra)[:3]
    if args.device == 'cuda' and not torch.cuda.is_available():
        sys.exit('error: --device cuda but torch sees no CUDA device')
    tok = transformers.AutoTokenizer.from_pretrained(args.model, revision=args.revision)
    yes_id, no_id = tok.convert_tokens_to_ids('yes'), tok.convert_tokens_to_ids('no')
    check_yes_no(yes_id, no_id, tok.unk_token_id)
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
    print('yes id %d, no id %d, pad id %d' % (yes_id, no_id, pad_id))

    ids_list = ref = None
    if args.verify:
        ids_list = encode_pairs(tok, pairs, args.max_length)
        ref = reference_scores(torch, transformers, args, tok, ids_list, yes_id, no_id)
        if args.device == 'cuda':
            torch.cuda.empty_cache()

    lm = transformers.AutoModelForCausalLM.from_pretrained(
        args.model, revision=args.revision, attn_implementation='eager').float().eval()
    fp16_in_torch = args.dtype == 'fp16' and args.device == 'cuda'
    wrapper = make_wrapper(torch, lm, yes_id, no_id).to(args.device)
    torch_scores = None
    if args.verify:
        ids, mask = (torch.tensor(x, device=args.device) for x in right_pad(ids_list, pad_id))
        with torch.no_grad():
            torch_scores = torch.sigmoid(wrapper(ids, mask)).tolist()
    if fp16_in_torch:  # weights only: buffers (RoPE inv_freq, w_diff) stay fp32 for accuracy
        for prm in wrapper.base.parameters():
            prm.data = prm.data.half()

    os.makedirs(args.out, exist_ok=True)
    out_path = os.path.join(args.out, 'model.onnx')
    revision = getattr(lm.config, '_commit_hash', None) or args.revision
    meta = metadata_props(args.model, revision, yes_id, no_id, args.dtype)
    with tempfile.TemporaryDirectory(dir=args.out) as tmp:
        raw = os.path.join(tmp, 'model.onnx')
        export(torch, args, wrapper, raw)
        del wrapper, lm
        if args.dtype == 'fp16' and not fp16_in_torch:
            try:
                from onnxconverter_common import float16
            except ImportError:
                sys.exit('error: --dtype fp16 on cpu needs onnxconverter-common '
                         '(pip install onnxconverter-common) or use --device cuda')
            m = float16.convert_float_to_float16(onnx.load(raw), keep_io_types=True,
                                                 disable_shape_infer=True)
            raw = os.path.join(tmp, 'model16.onnx')
            onnx.save_model(m, raw, save_as_external_data=True, location='model16.onnx.data')
        nbytes = finalize(onnx, raw, out_path, meta)
    copy_side_files(args, args.out)

    models = [(args.dtype, out_path)]
    if args.quantize:
        q_path = os.path.join(args.out, 'model.int8.onnx')
        for p in (q_path, q_path + '.data'):
            if os.path.exists(p):
                os.remove(p)
        quant = _import(['onnxruntime.quantization'])[0]
        # size estimate nbytes/2: int8 MatMul weights plus the embedding table kept in fp32
        quant.quantize_dynamic(out_path, q_path, weight_type=quant.QuantType.QInt8,
                               op_types_to_quantize=['MatMul'], per_channel=True,
                               use_external_data_format=needs_external_data(nbytes // 2))
        q = onnx.load(q_path, load_external_data=False)
        set_metadata(q, dict(meta, dtype='int8'))
        onnx.save_model(q, q_path)  # data stays where quantize_dynamic put it
        models.append(('int8', q_path))
        print('wrote %s' % q_path)

    if args.rerankd:
        import subprocess
        folder = os.path.join(args.out, 'rerankd')
        src = checkpoint_source(args.model, args.revision)
        cmd = rerankd_convert_cmd(args.rerankd, src, args.revision if src == args.model else None,
                                  folder)
        print('running ' + ' '.join(cmd))
        if subprocess.run(cmd).returncode != 0:
            sys.exit('error: %s failed' % ' '.join(cmd))
        models += rerankd_models(folder)

    if args.verify:
        keys = [(q, i) for q, _, i in pairs]
        if not verify(args, models, ref, ids_list, pad_id, torch_scores, keys):
            sys.exit('error: verification FAILED (see above)')
        print('verification passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
