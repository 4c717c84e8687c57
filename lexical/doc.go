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
// lowercasing, a small committed English stopword list, and light English
// stemming (Porter step 1: plurals, -ed, -ing, y→i, so "painted",
// "painting" and "paints" all match "paint"). The stemmer is a small
// implementation in this package: no maintained Go stemming library was
// available to the project. It applies to a–z words only; other scripts
// are lowercased but not stemmed. Terms are capped at 64 bytes.
//
// # Why CJK bigrams
//
// Chinese and Japanese are written without spaces, so "words" are runs of
// many characters ("我喜欢画画" is one run) that would never match another
// sentence. Dictionary segmentation needs large data files, which this
// backend exists to avoid. Instead, runs of Han, Hiragana, Katakana and
// Hangul characters are emitted as overlapping character bigrams
// (我喜 喜欢 欢画 画画), the standard approach of Lucene's CJKAnalyzer: most
// Chinese words are one or two characters, so bigrams capture them with
// good recall, and a run of one character is emitted as a unigram. Text
// mixing scripts ("用GPU加速") splits at script boundaries: "用", "gpu",
// "加速". Other scripts written without spaces (Thai, Lao, Khmer) are
// treated as one word per run, a known limitation.
//
// # Performance
//
// Each document is analyzed once; only the frequencies of query terms are
// kept, so memory grows with matches, not document size. A Scorer holds
// only its Config and is safe for concurrent use.
package lexical
