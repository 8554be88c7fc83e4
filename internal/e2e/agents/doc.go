// Package agents holds the end-to-end test and benchmarks of issue 12
// that run a real `xce serve` and real `xce agent` processes on this
// machine: 500 jobs of mixed shapes on 4 agents, checked from the jobs'
// own records and from the event log, `xce kill` of a job whose
// processes ignore SIGINT and SIGTERM, and 5,000 trivial jobs on 10
// agents against `xargs -P 160`. It has no code outside its tests.
package agents
