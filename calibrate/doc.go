// Package calibrate turns a pipeline's relevance scores into calibrated
// probabilities and chooses the threshold rerankd applies by default.
//
// # Why
//
// Neither backend's score is a probability of relevance. The lexical
// backend's score measures word overlap; the neural backend's
// sigmoid(yes − no) is the model's belief under its training data, not the
// frequency with which a memory is relevant in this application. A
// threshold such as "keep above 0.5" therefore means nothing until the
// scores are mapped onto observed frequencies: after calibration, among the
// candidates given 0.3, about 30% are relevant, and a threshold can be read
// as a promise about precision.
//
// # Input scale: what Apply takes
//
// A Calibration says which scale it expects (Input):
//
//   - "probability": the score a backend returns as relevance_score, in
//     [0, 1]: sigmoid(yes − no) for the neural backend, mapped BM25 for the
//     lexical one (lexical/doc.go). This is what rerankd has for every
//     backend, so it is what the server applies calibration to.
//   - "real": an unbounded score, such as the raw BM25 in a TREC run written
//     by `eval locomo`, or a logit.
//
// # Methods
//
// Platt scaling fits p = sigmoid(Slope·x + Intercept) by maximum
// likelihood, where x is the feature: logit(score) for probability inputs
// (Feature "logit", the default: for the neural backend logit(score) is
// exactly yes − no, so Platt is a temperature and a bias on the model's own
// margin), or the score itself (Feature "score"). The fit follows Platt
// (1999) with his target smoothing — positives get target (N₊+1)/(N₊+2),
// negatives 1/(N₋+2) — so separable data still gives finite parameters, and
// solves it with the Newton method and backtracking line search of Lin, Lin
// and Weng, "A note on Platt's probabilistic outputs for support vector
// machines", Machine Learning 68 (2007), Algorithm 1, which is numerically
// safe where Platt's original pseudo-code is not. A fit with a negative
// slope (scores anti-correlated with relevance) would break monotonicity;
// it is replaced by the constant fit (Slope 0) and reported.
//
// Isotonic regression fits the best non-decreasing step function by pool
// adjacent violators (PAV). Equal scores are pooled into one block before
// PAV (the "secondary" treatment of ties), so equal inputs always get equal
// outputs. Between blocks Apply interpolates linearly, as scikit-learn
// does, and clamps outside the fitted range. Isotonic needs more data than
// Platt and can give exactly 0 or 1; Platt is the default.
//
// "identity" keeps the scores (probability inputs only): a baseline, and a
// way to ship a threshold without a fit.
//
// # Thresholds and honesty
//
// A threshold is chosen on calibrated probabilities by a Rule: the maximum
// F1, the lowest threshold reaching a target precision (the most recall at
// that precision), or Youden's J (max TPR − FPR). Reporting a threshold's
// precision on the data that chose it is optimistic, and so is reporting
// calibration error on the data that fitted it. LeaveOneGroupOut therefore
// holds out each group (a LoCoMo conversation) in turn, fits and chooses the
// threshold on the rest, and scores only the held-out predictions; counts
// are pooled over folds. The shipped Calibration is fitted on all data,
// and carries the held-out numbers as its expected quality.
//
// Recall here is among the relevant candidates the pipeline proposed (the
// top-depth list), not among all relevant memories.
//
// # Calibration error
//
// ECE = Σ_b (n_b/N)·|mean prob_b − fraction relevant_b| over non-empty
// bins. Equal-width bins split [0, 1] evenly; they are the classic
// reliability diagram but leave most bins nearly empty when most pairs are
// irrelevant. Equal-mass bins hold about N/B pairs each (equal
// probabilities never straddle a bin edge), so every bin's estimate is
// equally reliable. The Brier score is the mean squared error of the
// probabilities and needs no bins.
//
// # File
//
// The Calibration is saved as versioned JSON (Version 1) holding the
// method, its parameters, the input scale, the threshold and the rule that
// chose it, where the data came from, and the held-out metrics. Parse
// rejects unknown fields, other versions, non-finite or non-monotone
// parameters and thresholds outside [0, 1]. Save writes atomically.
//
// Package plots (calibrate/plots) draws the reliability diagram, score
// histograms and threshold curves; it is separate so the server does not
// link the plotting library.
package calibrate
