// Package testtiers holds the check of scripts/test_tiers.txt, the list of
// packages whose tests `make test` runs without the race detector: a listed
// package exists, a norace package starts no goroutine (code or tests), and
// every goroutine-starting test of a mixed package is one its -run regexp
// sends back through -race. It has no code of its own; the check is its test.
package testtiers
