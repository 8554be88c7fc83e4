//go:build race

package agents

// raceEnabled: the test binary runs under the race detector.
const raceEnabled = true
