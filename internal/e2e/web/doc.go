// Package web holds the end-to-end tests of issue 16, the dashboard and
// the Prometheus metrics of the live scheduler. They build the xce
// binary, start `xce serve --config` with `xce agent` processes on
// loopback, and drive them with the `xce` commands:
//
//   - metrics_test.go: after a scripted run, /metrics (on the socket,
//     and on TCP with a token) is parsed with prometheus/common/expfmt and
//     every metric docs/metrics-live.md documents is checked, with its
//     labels and, where the run fixes it, its value;
//   - browser_test.go: Debian's chromium, headless, through chromedp,
//     logs in, sees a job submitted with the CLI appear without a reload,
//     shows a pending job's reason and host counts, kills a job from its
//     page by keyboard as its owner and finds no kill button as another
//     user, checks the pages' keyboard reachability and the hosts' text
//     and patterns in the DOM, and times the hosts view of 1,000 hosts
//     (reported, not asserted). It skips when chromium is not installed.
//
// Every process the tests start is recorded and ended by its pid; the
// tests never signal processes by name. This file holds no code: the
// package is test-only.
package web
