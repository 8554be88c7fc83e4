// Package resreq implements xce's resource requirement language, an
// LSF-compatible subset: parsing (Parse), the canonical form (String
// methods), and compilation of select expressions (CompileSelect) and order
// keys (CompileOrder) against a Schema for evaluation on flat host vectors.
//
// The language, the canonical form and the evaluation semantics are
// documented in docs/resreq.md.
package resreq
