"""Corpus for the Unigram golden files: the training text for spm_train and
the test strings (every hard case of the Precompiled normalizer, Metaspace
and the Unigram lattice). Deterministic."""
import random

BASE = [
    "The quick brown fox jumps over the lazy dog.",
    "Memories of a long conversation about travel plans in Lisbon and Tokyo.",
    "Café Naïve résumé ÉCOLE Über straße façade coöperate",
    "hello\nनमस्ते दुनिया", "مرحبا بالعالم\nالسَّلَامُ عَلَيْكُمْ",
    "我们今天去公园散步，天气很好。", "東京は日本の首都です。カタカナとひらがな",
    "한국어 문장도 포함합니다", "Привет, как дела? Всё хорошо.",
    "Γειά σου κόσμε", "שלום עולם", "สวัสดีครับ",
    "ＦＵＬＬ ｗｉｄｔｈ ｌａｔｉｎ １２３", "ﬁne ﬂow ﬀ ligatures ﬃ",
    "emoji 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️", "non\u00a0breaking\u3000ideographic space",
    "tabs\tand\r\nnewlines\n\nand   runs    of spaces", "e\u0301 a\u0308 n\u0303",
    "control\u0001chars\u0007here\u007f and \u200b zero width \ufeff bom",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "pneumonoultramicroscopicsilicovolcanoconiosis pneumonoultramicroscopicsilicovolcanoconiosis",
    "numbers 3.14159 2026-12-03 +1 (555) 123-4567 $100",
    "code: def f(x): return x**2 // comment <div class=\"a\">",
]

def training_text():
    rnd = random.Random(1)
    lines = []
    for i in range(3000):
        a = rnd.choice(BASE)
        b = rnd.choice(BASE)
        lines.append(a + " " + b)
    # Long pieces: repeated often enough to become single pieces over 20 bytes.
    for i in range(400):
        lines.append("pneumonoultramicroscopicsilicovolcanoconiosis अन्तर्राष्ट्रीयकरणसम्बन्धी")
    return "\n".join(lines) + "\n"

def test_strings():
    rnd = random.Random(2)
    out = list(BASE)
    out += [
        "", " ", "  ", "   leading", "trailing   ", " both ", "\n", "\n\n\t ", "a  b   c    d",
        "hello\nनमस्ते", "x\nمَرْحَبًا", "\tक्षि", "\u00a0\u0301", "\u3000\u093f",
        "Ａ\u0301", "ｅ\u0301ｅ", "ﬁ\u0301", "<s>", "</s>", "a<mask>b", "word<s>inside</s>word",
        " <mask> spaced <mask>", "<unk><pad>", "<mask>", "x <mask>", "x   <mask>y",
        "ⅷ ㈱ ㎏ ½ ² ™ …", "\U0001F600\U0001F600\U0001F600", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕞𝕒𝕥𝕙",
        "ꙮꙮꙮ ᚠᛇᚻ ⰀⰁ 𐌰𐌱𐌲", "\u0378\u0379 unassigned", "\ufffd\ufffd", "a\u0000b",
        "ÀÉÎÕÜ àéîõü ÇÑ çñ", "ǅ ǈ ǋ Ǆ", "İstanbul ıi", "ß ẞ", "ǰ ǰ̌",
        "pneumonoultramicroscopicsilicovolcanoconiosis", "अन्तर्राष्ट्रीयकरणसम्बन्धी",
        "ᄀᄀᄀ 각각", "\u1100\u1161\u11a8", "한\u0301",
    ]
    chars = [c for s in BASE for c in s] + list("\u0301\u0308\u093f\u094d\u064e\u00a0\u3000\n\t ﬁＡ👍\u200d🏽") 
    for i in range(400):
        n = rnd.randint(1, 40)
        out.append("".join(rnd.choice(chars) for _ in range(n)))
    for i in range(200):
        out.append(rnd.choice(BASE) + rnd.choice(["\n", " ", "  ", "\u3000", "\t", ""]) + rnd.choice(BASE))
    out.append(" ".join(BASE) * 20)  # very long input
    return out
