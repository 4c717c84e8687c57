"""Writes BERT-layout WordPiece tokenizer.json files (uncased with
TemplateProcessing, cased with BertProcessing and a short
max_input_chars_per_word) with a vocabulary built from the corpus, and the
test strings, for golden.js to encode with the reference.

usage: python3 wordpiece.py OUTDIR
"""
import collections, json, os, sys, unicodedata
sys.path.insert(0, os.path.dirname(__file__))
import corpus

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

def vocab(texts, lower):
    words = collections.Counter()
    chars = set()
    for t in texts:
        if lower:
            t = "".join(c for c in unicodedata.normalize("NFD", t.lower()) if unicodedata.category(c) != "Mn")
        for w in t.split():
            words[w.strip(".,!?;:()\"'")] += 1
            chars.update(w)
    out = list(SPECIAL)
    seen = set(out)
    def add(p):
        if p and p not in seen:
            seen.add(p); out.append(p)
    for c in sorted(chars):
        add(c); add("##" + c)
    for w, _ in words.most_common(300):
        add(w)
        for k in (2, 3, 4):
            if len(w) > k:
                add("##" + w[-k:])
    return {p: i for i, p in enumerate(out)}

def tokenizer_json(v, lower, post, max_chars):
    def added(i, c):
        return {"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}
    if post == "template":
        pp = {"type": "TemplateProcessing",
              "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
              "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
                       {"Sequence": {"id": "B", "type_id": 1}}, {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
              "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]}, "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}}
    else:
        pp = {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]}
    return {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [added(i, c) for i, c in enumerate(SPECIAL)],
            "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None, "lowercase": lower},
            "pre_tokenizer": {"type": "BertPreTokenizer"}, "post_processor": pp,
            "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": max_chars, "vocab": v}}

def main(out):
    os.makedirs(out, exist_ok=True)
    texts = corpus.test_strings() + [
        "x" * 150, "Ünïcödé " * 3, "İSTANBUL ΣΊΣΥΦΟΣ", "don't I'm it's we've you're do not", "a . b ? c ! d , e ' f",
        "[CLS] inside [SEP] text [MASK]", "un[MASK]able", "\u2028line\u2029para\u0085nel\u00ad soft",
        "\U000e0001 tag \U0010fffd private \ue000", "🥰🫠 newer emoji", "\u0378 unassigned",
        "Full，width：punct！？", "「引用」『二重』", "¿Qué? ¡Sí!", "a–b—c…d", "$100 + 5% = <x> ^ ` | ~",
    ]
    uncased = vocab(texts, True)
    cased = vocab(texts, False)
    with open(os.path.join(out, "bert-uncased.json"), "w") as f:
        json.dump(tokenizer_json(uncased, True, "template", 100), f, ensure_ascii=False)
    with open(os.path.join(out, "bert-cased.json"), "w") as f:
        json.dump(tokenizer_json(cased, False, "bert", 20), f, ensure_ascii=False)
    with open(os.path.join(out, "corpus.jsonl"), "w") as f:
        for s in texts:
            f.write(json.dumps({"text": s}, ensure_ascii=False) + "\n")

if __name__ == "__main__":
    main(sys.argv[1])
