// Package lexical is rerankd's embedded default backend: a BM25 scorer
// that needs no model files, so a fresh install answers POST /rerank with
// real (lexical) scores before any neural cross-encoder is installed.
//
// # What the scores mean
//
// Scores measure word overlap between the query and each document, weighted
// by BM25. They are NOT calibrated probabilities of relevance, and they are
// not on the neural model's scale: a threshold tuned for the cross-encoder
// (say "keep documents above 0.5") does not transfer. Within one request
// they rank documents sensibly; across requests they are only roughly
// comparable, because the collection statistics change (see below).
//
// # Why BM25 over the request's documents
//
// A reranker has no index: each request brings its own candidate list,
// typically the top-k of some first-stage retriever. So the request's
// documents are the collection. IDF is computed from them (a term present
// in every candidate does not help tell them apart, which is exactly what a
// reranker needs) and so is the average document length for length
// normalization. The consequences are deliberate: the same document can
// get a different Raw score in a different request, and Score is pure: it
// depends only on (query, docs, Config), with no state between requests.
//
// IDF uses the Lucene form
//
//	idf(t) = ln(1 + (N - n(t) + 0.5) / (n(t) + 0.5))
//
// with N the number of documents and n(t) the number containing t. Unlike
// the classic Robertson-Sparck Jones ln((N - n + 0.5)/(n + 0.5)), it is
// positive for every 0 <= n <= N, so a single-document request, or a term
// found in every document, still scores. A document's raw score is
//
//	raw(d) = Σ_t idf(t) · tf(t,d)·(K1+1) / (tf(t,d) + K1·(1 - B + B·|d|/avg|d|))
//
// summed over the distinct query terms t (a repeated query term counts
// once); |d| is Result.Tokens, the document's term count including
// stopwords. Stopwords are dropped from the query, unless the query
// consists only of stopwords ("The Who"), in which case they are kept.
// At most 1024 distinct query terms are used.
//
// # The mapping to (0, 1)
//
// Raw BM25 is unbounded and its scale depends on the query and the
// collection. The API promises a score in the open interval (0, 1), so
// each request computes the query's maximum attainable raw score
//
//	max = (K1+1) · Σ_t idf(t)
//
// (the limit of the tf factor is K1+1), and maps
//
//	x     = raw / max                        in [0, 1]
//	s     = 1 - (1 - Saturation)^x           in [0, Saturation]
//	Score = Margin + (1 - 2·Margin) · s      in [Margin, 1 - Margin]
//
// With the defaults (Saturation 0.99, Margin 1e-6): a document matching no
// query term gets exactly 1e-6, the lowest possible score; one that contains
// every query term once at average length (x = 1/(K1+1) ≈ 0.45) gets about
// 0.88, twice about 0.94; the maximum is 0.99. Dividing by max makes the
// score independent of the absolute IDF scale (a one-document request is
// scored like a large one) while still rewarding documents that match the
// rare, informative query terms. Query terms that appear in no document
// still count in max, so a document matching half of the query cannot look
// like a full match. The mapping is strictly increasing in raw within a
// request, so ranking by Score equals ranking by Raw (up to float64
// rounding; Raw is returned for exact tie-breaking). Every division is
// guarded: an empty query, documents without terms, NaN or Inf never reach
// the output, which is always finite and inside (0, 1).
//
// # Analysis
//
// Query and documents go through the same analyzer: NFKC normalization,
// Unicode word segmentation with the unicode tables (letters, numbers,
// combining marks; an apostrophe between letters joins "don't"), Unicode
// lowercasing, a small committed English stopword list, and Snowball
// English (Porter2) stemming from github.com/blevesearch/snowballstem, the
// Go code generated from the Snowball project's own definitions, so
// "painted", "painting" and "paints" all match "paint". It replaced a
// hand-written Porter step 1 after measuring it on the LoCoMo dev split:
// MAP 0.4366 → 0.4432, NDCG@10 0.4824 → 0.4888 (github.com/kljensen/snowball
// gives identical stems, at about three times the cost per word). Stemming
// applies to a–z words only; other scripts are lowercased but not stemmed.
// Terms are capped at 64 bytes. Analyzer exposes the analysis to callers
// that keep their own index (retrieval/bm25).
//
// # CJK text
//
// Chinese and Japanese are written without spaces, so "words" are runs of
// many characters ("我喜欢画画" is one run) that would never match another
// sentence. Runs of Han, Hiragana, Katakana and Hangul characters are
// turned into terms by Config.CJK (see CJKMode); text mixing scripts
// ("用GPU加速") splits at script boundaries first: "用", "gpu", "加速".
// The default, CJKUnigramBigram, emits every character and every pair of
// adjacent characters (我 我喜 喜 喜欢 欢 ...), Lucene's CJKBigramFilter
// with unigrams. A handful of Chinese function words (particles such as
// 的 了 吗, question words such as 什么 哪 谁) are stopwords, handled like
// the English ones. The default was chosen by measurement on the Chinese
// agent-memory set of benchmarks/zh (docs/perf/measurements.md, and
// benchmarks/zh/README.md for per-tag numbers and commands).
//
// Bigrams alone (Lucene's CJKAnalyzer, this package's earlier behaviour)
// miss every word of one character inside a longer run (猫 in 打了猫三联疫苗)
// and give no credit to paraphrases that share single characters with
// the answer, which agent memories are full of. Dictionary segmentation
// (github.com/go-ego/gse, jieba's algorithm) does better than bigrams but
// worse than unigrams+bigrams unless it keeps unigrams too, and then it
// ties with the default (the difference is not significant) while costing
// about 4 s of CPU to load its dictionary, 200 MB of heap and 33 MB of
// binary. It is available (import package lexical/gse and set Config.CJK)
// but not the default. Every mode reaches memory search too: the memory
// index analyses with retrieval/bm25.Config.Analyzer, which `rerankd serve
// --analyzer MODE` sets (gse modes in a binary built with -tags gse). On text without CJK characters every mode gives
// the same terms (LoCoMo's numbers are identical in all five).
//
// Traditional and simplified characters are different terms (鋼琴 does not
// match 钢琴; NFKC does not map between them), so a query in one script
// finds a memory in the other only through the characters the two share.
// Folding traditional into simplified at analysis time would fix that
// (that direction is mostly many-to-one), but needs a conversion table
// (OpenCC's, phrase-level to be right) and the test set has only seven
// traditional queries, too few to measure it: not added. Other scripts
// written without spaces (Thai, Lao, Khmer) are treated as one word per
// run, a known limitation.
//
// # Performance
//
// Each document is analyzed once; only the frequencies of query terms are
// kept, so memory grows with matches, not document size. A Scorer holds
// only its Config and a read-only Analyzer and is safe for concurrent use.
package lexical
