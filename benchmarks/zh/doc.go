// Package zh is rerankd's Chinese retrieval test set: the long-term memory
// of one Chinese-speaking user's agent, with questions and graded
// relevance judgments, used to choose how package lexical analyzes CJK
// text (eval zh; results in README.md).
//
// # Why a set of our own
//
// LoCoMo, our English benchmark, has no Chinese, and the public Chinese
// retrieval sets are web search or encyclopedia passages: long documents,
// formal language, no first person, no dates. Agent memories are the
// opposite: one-line notes and dialog turns about one person's life
// (家人, 工作, 健康, 出行, 花销), full of names, numbers, Latin product names
// inside Chinese ("我的 MacBook"), and questions that rephrase what was
// said ("我什么水果不能吃" for "我对芒果过敏"). Those are what the lexical
// analyzer has to get right, so the set is made of them.
//
// # What is in it
//
// testdata/memories.json holds 200 memories of 林悦, a product manager in
// Shanghai (her husband 陈浩, daughter 朵朵, cat 橘子, parents in 成都, a
// Taiwanese friend 阿傑 who writes in traditional characters), dated
// through 2024: facts, preferences, plans, events and dialog turns, some
// of them the assistant's own. testdata/queries.json holds 78 questions,
// each with tags saying what makes it hard (see the Tag constants) and its
// judgments. Everything was written by hand for this project; nothing is
// copied from another data set, so it carries this repository's license.
// Persons, companies and numbers are fictional.
//
// The questions avoid the easy case on purpose: none is a substring of a
// memory it is answered by (a test checks this), about a third are
// paraphrases sharing at most a character or two with the answer, and
// tagged subsets cover names, numbers and codes, Chinese mixed with Latin
// words, full-width forms (ＣＡ１８３１, ＭａｃＢｏｏｋ) and traditional
// characters, both when query and memory share the script and when they
// do not (阿杰 asked about, 阿傑 remembered).
//
// # How the judgments were made
//
// One assessor (the author of the set) graded each question against all
// 200 memories: 2 when the memory answers the question, 1 when it is
// useful context (an earlier plan, a follow-up, or the memory that says
// who "老公" or "橘子" is when the answer uses the other name), nothing
// otherwise. After a first run, the top five memories of each CJK mode
// for every question were reviewed with the same rules (pooling, as TREC
// does); that added 16 grade-1 judgments and no grade 2. Every question
// has at least one grade-2 memory. A single assessor who also wrote the
// analyzer is the main weakness of the set: read the numbers as a
// comparison of analyzers on realistic text, not as an absolute level.
//
// # Scripts and forms
//
// Package lexical normalizes with NFKC, which folds full-width Latin and
// digits into ASCII (so ＣＡ１８３１ = CA1831) but does not map traditional
// characters to simplified ones: a traditional query matches a simplified
// memory only through the characters the two scripts share. The
// traditional-tagged questions measure that on purpose.
//
// Load returns the embedded set; Parse reads and checks another copy.
// Qrels gives the judgments as benchmarks/metrics scores them.
package zh
