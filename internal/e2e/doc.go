// Package e2e holds xce's end-to-end tests (issue 12): they build the xce
// binary, start `xce serve --dev` as a child process and drive it with
// the `xce` commands and raw requests on its socket, as users would.
//
//   - crash_test.go: the server is killed with SIGKILL at random points
//     during a storm of submits while jobs run, and restarted on the same
//     data directory; every acknowledged job must exist, none may start
//     twice, none may be lost, and a submit made while the server is down
//     must fail cleanly.
//   - security_test.go (as root only): jobs run as their submitter, users
//     cannot act on each other's jobs or on hosts, and bad requests on the
//     socket are refused without changing anything.
//
// The tests are Linux only (they read /proc and make the test process a
// child subreaper, so the job processes a killed server leaves behind are
// reparented to it and can be found, ended and reaped). This file holds
// no code: the package is test-only.
package e2e
