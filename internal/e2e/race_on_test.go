//go:build linux && race

package e2e

// raceBuild: the tests run under the race detector, and so does the xce
// binary they build (a race the server meets is a test failure).
const raceBuild = true
