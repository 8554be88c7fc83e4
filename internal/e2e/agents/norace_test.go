//go:build !race

package agents

const raceEnabled = false
