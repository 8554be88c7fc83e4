package agent

import (
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// notLeaderHeader and leaderHeader are api.NotLeaderHeader and
// api.LeaderHeader: set on the 503 answer of a member of a replicated
// control plane that is not the leader, the second with the leader's
// address when the member knows it.
const (
	notLeaderHeader = "Xce-Not-Leader"
	leaderHeader    = "Xce-Leader"
)

// next moves the agent on from bases[cur], unless another request did
// already: to the server at leader (host:port) when it is one of the
// agent's, else to the next one. A session belongs to the server that
// gave it: the next server answers it with 410, and the agent registers
// there again.
func (r *Remote) next(cur int32, leader string) {
	if len(r.bases) < 2 {
		return
	}
	to := (cur + 1) % int32(len(r.bases))
	for i, b := range r.bases {
		if leader != "" && (b == "http://"+leader || b == "https://"+leader) {
			to = int32(i)
		}
	}
	r.cur.CompareAndSwap(cur, to)
}

// termFile, in the agent's directory, keeps the highest raft term the
// agent has seen.
const termFile = "term"

// see records term as seen when it is higher than any seen before, in
// Dir/term first (written whole, then renamed), so that a restarted agent
// still refuses an older leader's starts. A failed write is logged; the
// term is then kept in memory only.
func (r *Remote) see(term uint64) {
	for {
		cur := r.term.Load()
		if term <= cur {
			return
		}
		if r.term.CompareAndSwap(cur, term) {
			break
		}
	}
	path := filepath.Join(r.o.Dir, termFile)
	if err := writeFileSync(path+".new", []byte(strconv.FormatUint(term, 10)+"\n")); err != nil {
		r.o.Logf("keep raft term %d: %v", term, err)
		return
	}
	if err := os.Rename(path+".new", path); err != nil {
		r.o.Logf("keep raft term %d: %v", term, err)
	}
}

// writeFileSync writes data to path (mode 0600) and fsyncs it.
func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// retryLimit bounds the delay between failed exchanges: a quarter of the
// heartbeat timeout, and 500 ms with several servers, so that the agent
// finds a new leader soon after its election.
func (r *Remote) retryLimit() time.Duration {
	limit := r.heartbeatTimeout() / 4
	if len(r.bases) > 1 {
		limit = min(limit, 500*time.Millisecond)
	}
	return limit
}
