// Package sim drives a runtime.Scheduler on a virtual clock: the
// discrete-event loop shared by `xce schedule --until` and the simulator.
// It uses the very same scheduler, plugins and runner as a live cycle; only
// time is virtual.
package sim
