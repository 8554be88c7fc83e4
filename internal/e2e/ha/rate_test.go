//go:build linux

package ha

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/client"
)

// EnvRate runs TestSubmitRate (it measures; it asserts nothing about
// time): XCE_HA_RATE=1.
const EnvRate = "XCE_HA_RATE"

// TestSubmitRate measures acknowledged submits per second, from 8
// concurrent clients on the socket for 5 s, against a single server and
// against the leader of three members (BENCHMARKS.md).
func TestSubmitRate(t *testing.T) {
	if os.Getenv(EnvRate) == "" {
		t.Skip("a measurement: " + EnvRate + "=1 runs it")
	}
	conf := "hosts:\n  - {name: h1, slots: 4}\nqueues:\n  - {name: normal, policy: firstfit}\n"
	for _, members := range []int{1, 3} {
		c := prepare(t, conf)
		if members == 1 {
			c.raftArgs = func(int) []string { return nil }
			c.start(0)
		} else {
			for i := range 3 {
				c.start(i)
			}
		}
		socks := c.sockets()
		if members == 1 {
			socks = filepath.Join(c.data(0), "xce.sock")
		}
		cl, err := client.Open(socks, "")
		if err != nil {
			t.Fatal(err)
		}
		req := []api.JobRequest{{TasksMin: 1, TasksMax: 1, Command: []string{"/bin/true"}, Cwd: "/"}}
		for end := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if _, err = cl.Submit(context.Background(), req); err == nil {
				break
			}
			if time.Now().After(end) {
				t.Fatal(err)
			}
		}
		var n atomic.Int64
		var wg sync.WaitGroup
		began := time.Now()
		end := began.Add(5 * time.Second)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(end) {
					if _, err := cl.Submit(context.Background(), req); err != nil {
						t.Error(err)
						return
					}
					n.Add(1)
				}
			}()
		}
		wg.Wait()
		took := time.Since(began)
		t.Logf("%d member(s): %d submits acknowledged in %.2f s: %.0f/s", members, n.Load(), took.Seconds(), float64(n.Load())/took.Seconds())
		for i := range 3 {
			if c.procs[i] != nil {
				c.stop(i)
			}
		}
	}
}
