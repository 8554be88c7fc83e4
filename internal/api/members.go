package api

// NotLeaderHeader is set ("1") on the 503 answer of a member of a
// replicated control plane that is not the leader: the request was not
// taken, and a client may send it to another member (docs/ha.md).
const NotLeaderHeader = "Xce-Not-Leader"

// LeaderHeader, on a NotLeaderHeader answer, is the address of the
// leader's TCP listener (host:port), when the member knows it.
const LeaderHeader = "Xce-Leader"

// MembersReply is the answer of GET /v1/members: what the member asked
// says of itself (one entry; xce server members asks each member).
type MembersReply struct {
	Members []Member `json:"members"`
}

// Member is one server of a replicated control plane: its raft ID and
// address (the same, host:port), the address of its TCP listener (API),
// its role ("leader", "follower", "candidate", "shutdown"), the raft term
// it is in and the index of its last raft entry.
type Member struct {
	ID        string `json:"id"`
	API       string `json:"api"`
	Raft      string `json:"raft"`
	Role      string `json:"role"`
	Term      uint64 `json:"term"`
	LastIndex uint64 `json:"last_index"`
}

// MemberChange is the body of POST /v1/members/join and
// /v1/members/remove: the raft address of the member to add or remove
// (an administrator, on a member's socket; the leader carries it out).
type MemberChange struct {
	Raft string `json:"raft"`
}
