// Package framework is xce's plugin contract: the extension points
// (Allocator, Acceptor, Preparer, Picker), the values that cross them (Plan,
// Bucket, Claim, AllocRequest, Request, View), pending reasons, the
// Committer that persists an allocation, and the plugin Registry.
//
// Plugins only read: they describe plans and fill requests. The one
// allocation algorithm that claims hosts, rolls back and commits is the
// runner in framework/runtime (docs/architecture.md).
package framework
