//go:build race

package sim_test

// raceEnabled: the whole-trace replays are skipped under the race
// detector (ten times slower); .ci/run runs them without it.
const raceEnabled = true
