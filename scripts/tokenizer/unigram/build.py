"""Trains a SentencePiece Unigram model (nmt_nfkc, as XLM-R), converts it to
tokenizer.json files in XLM-R layout (fairseq ids: <s>=0 <pad>=1 </s>=2
<unk>=3, pieces shifted by one, <mask> last) in the three normalizer forms
found on the hub, and writes the test strings with SentencePiece's own ids.

usage: /usr/bin/python3 build.py OUTDIR   (needs spm_train and python3-sentencepiece)
"""
import base64, json, os, struct, subprocess, sys, tempfile
import sentencepiece as spm
sys.path.insert(0, os.path.dirname(__file__))
import corpus

def fields(buf):
    """Yields (field, wire type, value) of a protobuf message."""
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        f, w = key >> 3, key & 7
        if w == 0:
            v, i = varint(buf, i)
        elif w == 1:
            v = buf[i:i+8]; i += 8
        elif w == 2:
            n, i = varint(buf, i); v = buf[i:i+n]; i += n
        elif w == 5:
            v = buf[i:i+4]; i += 4
        else:
            raise ValueError(w)
        yield f, w, v

def varint(buf, i):
    r = s = 0
    while True:
        b = buf[i]; i += 1
        r |= (b & 0x7f) << s; s += 7
        if b < 0x80:
            return r, i

def read_model(path):
    pieces, charsmap = [], b""
    for f, w, v in fields(open(path, "rb").read()):
        if f == 1:
            p = dict(piece="", score=0.0, type=1)
            for g, _, x in fields(v):
                if g == 1: p["piece"] = x.decode()
                if g == 2: p["score"] = struct.unpack("<f", x)[0]
                if g == 3: p["type"] = x
            pieces.append(p)
        if f == 3:
            for g, _, x in fields(v):
                if g == 2: charsmap = x
    return pieces, charsmap

def tokenizer_json(pieces, charsmap, form, post):
    vocab = [["<s>", 0.0], ["<pad>", 0.0], ["</s>", 0.0], ["<unk>", 0.0]]
    vocab += [[p["piece"], p["score"]] for p in pieces[3:]]
    vocab += [["<mask>", 0.0]]
    pre = {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode()}
    norms = {
        "current": [pre, {"type": "Strip", "strip_left": False, "strip_right": True, "left": False, "right": True},
                    {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "▁"}],
        "older": [pre, {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}],
        "plain": None,
    }[form]
    normalizer = pre if norms is None else {"type": "Sequence", "normalizers": norms}
    def added(i, c, lstrip=False):
        return {"id": i, "content": c, "single_word": False, "lstrip": lstrip, "rstrip": False, "normalized": False, "special": True}
    n = len(vocab)
    if post == "template":
        pp = {"type": "TemplateProcessing",
              "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
              "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}},
                       {"SpecialToken": {"id": "</s>", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
              "special_tokens": {"<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]}, "</s>": {"id": "</s>", "ids": [2], "tokens": ["</s>"]}}}
    else:
        pp = {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0], "trim_offsets": True, "add_prefix_space": True}
    meta = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}
    return {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [added(0, "<s>"), added(1, "<pad>"), added(2, "</s>"), added(3, "<unk>"), added(n - 1, "<mask>", True)],
            "normalizer": normalizer, "pre_tokenizer": meta, "post_processor": pp, "decoder": meta,
            "model": {"type": "Unigram", "unk_id": 3, "vocab": vocab, "byte_fallback": False}}

def main(out):
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as d:
        txt = os.path.join(d, "train.txt")
        open(txt, "w").write(corpus.training_text())
        subprocess.run(["spm_train", f"--input={txt}", f"--model_prefix={d}/m", "--model_type=unigram",
                        "--normalization_rule_name=nmt_nfkc", "--vocab_size=600", "--hard_vocab_limit=false", "--character_coverage=0.9995",
                        "--max_sentencepiece_length=64",
                        "--minloglevel=2"], check=True, capture_output=True)
        model = f"{d}/m.model"
        pieces, charsmap = read_model(model)
        sp = spm.SentencePieceProcessor(model_file=model)
    for form in ("current", "older", "plain"):
        with open(os.path.join(out, f"xlmr-{form}.json"), "w") as f:
            json.dump(tokenizer_json(pieces, charsmap, form, "template"), f, ensure_ascii=False)
    with open(os.path.join(out, "xlmr-roberta.json"), "w") as f:
        json.dump(tokenizer_json(pieces, charsmap, "current", "roberta"), f, ensure_ascii=False)
    with open(os.path.join(out, "corpus.jsonl"), "w") as f:
        for s in corpus.test_strings():
            ids = [3 if i == 0 else i + 1 for i in sp.encode(s)]
            f.write(json.dumps({"text": s, "spm": ids}, ensure_ascii=False) + "\n")

if __name__ == "__main__":
    main(sys.argv[1])
