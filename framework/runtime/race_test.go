//go:build race

package runtime_test

// raceEnabled makes the exhaustive tests sample their space: the race
// detector slows them about tenfold, and the full space runs without it.
const raceEnabled = true
