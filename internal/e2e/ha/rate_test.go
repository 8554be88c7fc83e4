//go:build linux

package ha

import (
	"context"
	"os"
	"path/filepath"
	"slices"
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

// TestForwardLatency measures (XCE_HA_RATE=1) what a write through a
// follower costs: the latency of 200 submits one after the other, and
// the submits acknowledged per second from 8 concurrent clients for 3 s,
// through the leader's socket, a follower's socket and a follower's TCP
// listener with a token; then the latency of a read of the job just
// submitted through the follower's socket, from the follower, which must
// show it (docs/ha.md).
func TestForwardLatency(t *testing.T) {
	if os.Getenv(EnvRate) == "" {
		t.Skip("a measurement: " + EnvRate + "=1 runs it")
	}
	c := newCluster(t, "hosts:\n  - {name: h1, slots: 4}\nqueues:\n  - {name: normal, policy: firstfit}\n")
	cl := c.dial()
	l := c.leader(cl)
	f := (l + 1) % 3
	lc, err := client.Open(filepath.Join(c.data(l), "xce.sock"), "")
	if err != nil {
		t.Fatal(err)
	}
	fc, err := client.Open(filepath.Join(c.data(f), "xce.sock"), "")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := fc.Token(context.Background(), "root", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	tokFile := filepath.Join(c.dir, "token")
	if err := os.WriteFile(tokFile, []byte(tok.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tc, err := client.Open(c.url(f), tokFile)
	if err != nil {
		t.Fatal(err)
	}
	req := []api.JobRequest{{TasksMin: 1, TasksMax: 1, Command: []string{"/bin/true"}, Cwd: "/"}}
	for _, via := range []struct {
		name string
		cl   *client.Client
	}{{"leader's socket", lc}, {"follower's socket", fc}, {"follower's TCP", tc}} {
		lat := make([]time.Duration, 200)
		for i := range lat {
			began := time.Now()
			if _, err := via.cl.Submit(context.Background(), req); err != nil {
				t.Fatalf("%s: %v", via.name, err)
			}
			lat[i] = time.Since(began)
		}
		slices.Sort(lat)
		var n atomic.Int64
		var wg sync.WaitGroup
		began := time.Now()
		end := began.Add(3 * time.Second)
		for range 8 {
			wg.Go(func() {
				for time.Now().Before(end) {
					if _, err := via.cl.Submit(context.Background(), req); err != nil {
						t.Error(err)
						return
					}
					n.Add(1)
				}
			})
		}
		wg.Wait()
		took := time.Since(began)
		t.Logf("%s: one by one p50 %v, p99 %v; 8 clients %.0f submits/s", via.name,
			lat[len(lat)/2].Round(10*time.Microsecond), lat[len(lat)*99/100].Round(10*time.Microsecond), float64(n.Load())/took.Seconds())
	}
	lat := make([]time.Duration, 100)
	for i := range lat {
		rep, err := fc.Submit(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		js, err := fc.Jobs(context.Background(), "", false, rep.IDs)
		lat[i] = time.Since(began)
		if err != nil || len(js) != 1 {
			t.Fatalf("job %d read from the follower right after: %v, %v", rep.IDs[0], js, err)
		}
	}
	slices.Sort(lat)
	t.Logf("a read of the job just submitted, from the follower: p50 %v, p99 %v", lat[len(lat)/2].Round(10*time.Microsecond), lat[len(lat)*99/100].Round(10*time.Microsecond))
}
