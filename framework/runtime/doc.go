// Package runtime runs xce's scheduling: the framework runner (Allocate,
// the one allocation algorithm every allocator plugin shares;
// docs/architecture.md),
// the scheduling cycle that feeds it jobs in picking order under each
// queue's policy, and the in-memory committer used by `xce schedule` and the
// simulator.
package runtime
