//go:build race

package web

// raceEnabled: the test binary runs under the race detector (and builds
// xce with it).
const raceEnabled = true
