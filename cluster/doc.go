// Package cluster holds xce's domain model: hosts, host consumable
// resources, cluster-wide shared resources, queues, limits and jobs, loaded
// from a scenario file (docs/scenario.md), and State, the mutable per-host
// and per-shared-resource counters that the allocation runner reserves from.
//
// Names are interned once at load: hosts, resources, queues and shared
// resources are addressed by small integer IDs (their index in the Cluster's
// slices), and the per-host state lives in flat slices indexed by those IDs.
package cluster
