package api

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// NotLeaderHeader is set ("1") on the 503 answer of a member of a
// replicated control plane that is not the leader: the request was not
// taken, and a client may send it to another member (docs/ha.md).
const NotLeaderHeader = "Xce-Not-Leader"

// LeaderHeader, on a NotLeaderHeader answer, is the address of the
// leader's TCP listener (host:port), when the member knows it.
const LeaderHeader = "Xce-Leader"

// ForwardedHeader is set ("1") on a request a follower forwards to the
// leader (docs/ha.md): a member that receives it and does not lead
// answers 503 with NotLeaderHeader instead of forwarding it again. It
// carries no authority: the caller is still the one its token names.
const ForwardedHeader = "Xce-Forwarded"

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
// (an administrator, on a member's socket or with a token; the leader
// carries it out).
type MemberChange struct {
	Raft string `json:"raft"`
}

// ErrNotLeader is what a Members function returns (wrapped) when this
// member does not lead: the answer is 503 with NotLeaderHeader.
var ErrNotLeader = errors.New("this server is not the leader")

// changeMember serves POST /v1/members/join and /v1/members/remove:
// administrators only (Handler.admin, as every other administrator's
// route), through Handler.Members.
func (h *Handler) changeMember(join bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, _ := callerOf(r.Context())
		if !h.admin(c) {
			fail(w, &Error{Status: http.StatusForbidden, Msg: "only an administrator may add or remove a server"})
			return
		}
		if h.Members == nil {
			fail(w, &Error{Status: http.StatusConflict, Msg: "this server is not a member of a replicated control plane (docs/ha.md)"})
			return
		}
		var req MemberChange
		if err := decode(w, r, &req); err != nil {
			fail(w, err)
			return
		}
		if req.Raft == "" {
			fail(w, &Error{Status: http.StatusBadRequest, Msg: `want {"raft": "host:port"}`, Field: "raft"})
			return
		}
		if _, _, err := net.SplitHostPort(req.Raft); err != nil || strings.ContainsAny(req.Raft, " \t\r\n") {
			fail(w, &Error{Status: http.StatusBadRequest, Msg: fmt.Sprintf("raft address %q: want host:port", req.Raft), Field: "raft"})
			return
		}
		err := h.Members(r.Context(), req.Raft, join)
		switch {
		case errors.Is(err, ErrNotLeader):
			w.Header().Set(NotLeaderHeader, "1")
			fail(w, &Error{Status: http.StatusServiceUnavailable, Msg: err.Error()})
		case err != nil:
			fail(w, &Error{Status: http.StatusInternalServerError, Msg: err.Error()})
		default:
			reply(w, http.StatusOK, map[string]bool{"ok": true})
		}
	}
}

// MemberFunc adds (join) or removes the member of raft address addr from
// a replicated control plane; ErrNotLeader (wrapped) when this member
// does not lead.
type MemberFunc func(ctx context.Context, addr string, join bool) error
