// Package locomo loads the LoCoMo long-term conversational memory benchmark
// ("Evaluating Very Long-Term Conversational Memory of LLM Agents", ACL
// 2024) as a retrieval task: memories to search, questions to ask, and
// relevance judgments (qrels) from each question's evidence turns.
//
// The data is CC BY-NC 4.0, so it never enters this repository; callers
// (and the tests, via $RERANKD_LOCOMO) pass a path to it. Load reads either
// the per-conversation files of the LoCoMo repository (26.json, ...) or the
// official single-file release (locomo10.json), detected per file, and the
// two give identical Datasets.
//
// # DocIDs and question IDs
//
// IDs are built so that a run file written today still matches qrels
// computed later, and can be checked against the raw JSON by eye:
//
//	<conv>/D<s>:<t>  turn t of session s: the data's own dia_id
//	<conv>/S<s>      session s
//	<conv>/O<s>:<k>  the k-th observation of session s (speaker_a's first)
//	<conv>/Sum<s>    session s's summary
//	<conv>/Q<i>      question qa[i], i counting from 0 in the file
//
// <conv> is the file stem ("26") or the release's sample_id without its
// "conv-" prefix ("conv-26" -> "26"), so both layouts agree. A question
// keeps its position-based ID when others are skipped, which keeps IDs
// stable if the quirk policy below ever changes. Retrieval in LoCoMo is
// per conversation: a question searches only its own conversation's
// memories (Memory.ConvID == Question.ConvID).
//
// # Quirk policy
//
// The released files contain hand-typed evidence lists with mistakes. The
// policy is to repair what has exactly one reading, drop the rest, and count
// both (Stats), never to guess:
//
//   - Several ids in one string ("D8:6; D9:17") are split on ';', ',' and
//     spaces; each part is then treated on its own.
//   - Zero padding ("D30:05"), a stray colon ("D:11:26"), a missing or
//     lowercase "D" are rewritten to the canonical "D<s>:<t>", but only
//     kept if that turn exists: a rewrite that names no turn is not a
//     repair and counts as malformed.
//   - Anything else ("D", "") is malformed and dropped.
//   - A well-formed id naming no turn ("D10:19" in a 16-turn session) is
//     dangling and dropped: inventing a nearby turn would put wrong
//     judgments in the qrels, which is worse than one fewer.
//   - Ids repeated within a question, after repair, are dropped.
//   - A question left without evidence (the data has some with an empty
//     list) has nothing to judge a ranking against and is skipped.
//
// Other quirks: some files date sessions that have no turns (26.json dates
// sessions 20-35 but has turns for 1-19); they are not loaded. Turns whose
// dia_id is unusable, repeated, or of another session are dropped. A few
// answers are JSON numbers; they are kept as their text. Observations link
// to a dia_id, a list of them, or a comma-joined string; links are
// resolved like evidence, silently. Session date-times ("1:56 pm on 8 May,
// 2023") are parsed by ParseTime into UTC (the data has no zone); one that
// does not parse leaves Session.Time zero and is counted, the raw text is
// always kept. Structural type errors (a session that is not a list) fail
// the load with the file named: those are not quirks but a different
// format.
package locomo
