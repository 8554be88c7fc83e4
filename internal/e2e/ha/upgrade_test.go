//go:build linux

package ha

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/client"
)

// TestUpgrade turns a single server's data directory into the first
// member of a cluster: the single server takes three jobs and issues a
// token, and stops; it starts again as the only peer of a new cluster, two
// empty members join it (xce server join), two more jobs come, and the
// first member is killed. The next leader holds all five jobs with their
// IDs, and the token the single server issued lists them over TCP.
func TestUpgrade(t *testing.T) {
	c := prepare(t, "hosts:\n  - {name: h1, slots: 4}\nqueues:\n  - {name: normal, policy: firstfit}\n")
	single := true
	c.raftArgs = func(i int) []string {
		switch {
		case single:
			return nil
		case i == 0:
			return []string{"--raft", c.raft[0], "--peers", c.raft[0]}
		}
		return []string{"--raft", c.raft[i]}
	}
	c.start(0)
	sock0 := filepath.Join(c.data(0), "xce.sock")
	one, err := client.Open(sock0, "")
	if err != nil {
		t.Fatal(err)
	}
	submit := func(cl *client.Client, name string) int64 {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
		defer cancel()
		rep, err := cl.Submit(ctx, []api.JobRequest{{Name: name, TasksMin: 1, TasksMax: 1, Command: []string{"/bin/true"}, Cwd: "/"}})
		if err != nil {
			t.Fatalf("submit %s: %v", name, err)
		}
		return rep.IDs[0]
	}
	var tok api.TokenReply
	for end := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if tok, err = one.Token(context.Background(), "root", time.Hour); err == nil {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the single server did not answer: %v", err)
		}
	}
	for k := 1; k <= 3; k++ {
		if id := submit(one, fmt.Sprint("old", k)); id != int64(k) {
			t.Fatalf("job old%d got ID %d", k, id)
		}
	}
	c.stop(0)

	single = false
	for i := range 3 {
		c.start(i)
	}
	cl := c.dial()
	if l := c.leader(cl); l != 0 {
		t.Fatalf("member %d leads, want the upgraded one", l)
	}
	for i := 1; i < 3; i++ {
		out, err := exec.Command(xceBin, "server", "join", c.raft[i], "--server", c.sockets()).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != c.raft[i]+": joined" {
			t.Fatalf("xce server join %s: %v: %s", c.raft[i], err, out)
		}
	}
	for k := 4; k <= 5; k++ {
		if id := submit(cl, fmt.Sprint("new", k)); id != int64(k) {
			t.Fatalf("job new%d got ID %d", k, id)
		}
	}
	c.caughtUp(cl)
	c.kill(0)
	if l := c.leader(cl); l == 0 {
		t.Fatal("the killed member leads")
	}
	tokFile := filepath.Join(c.dir, "token")
	if err := os.WriteFile(tokFile, []byte(tok.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tcp, err := client.Open("http://"+c.apis[1]+",http://"+c.apis[2], tokFile)
	if err != nil {
		t.Fatal(err)
	}
	// A follower may answer, a moment behind (docs/ha.md).
	var jobs []api.JobInfo
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		jobs, err = tcp.Jobs(context.Background(), "all", true, nil)
		if err == nil && len(jobs) == 5 || time.Now().After(end) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range jobs {
		got = append(got, fmt.Sprintf("%d:%s", j.ID, j.Name))
	}
	if want := "[1:old1 2:old2 3:old3 4:new4 5:new5]"; fmt.Sprint(got) != want {
		t.Fatalf("jobs %v, want %s", got, want)
	}
}
