package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/xce-sched/xce/internal/api"
)

// newServerCmd is `xce server`: the members of a replicated control plane
// (docs/ha.md).
func newServerCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "server",
		Short: "The servers of a replicated control plane (docs/ha.md)",
		Args:  usageArgs(cobra.NoArgs),
	}
	cmd.AddCommand(newMembersCmd(), newMemberChangeCmd(true), newMemberChangeCmd(false))
	return cmd
}

// newMemberChangeCmd is `xce server join` (join) or `xce server remove`.
func newMemberChangeCmd(join bool) *cobra.Command {
	var server conn
	verb, done, short := "remove", "removed", "Remove a server from a replicated control plane (administrators)"
	if join {
		verb, done, short = "join", "joined", "Add a server to a replicated control plane as a voter (administrators)"
	}
	cmd := &cobra.Command{
		Use:   verb + " RAFTADDR --server LIST",
		Short: short,
		Long: short + `: the leader changes the raft configuration. --server
names a member or a comma-separated list of them: sockets (the caller
is the user running this), or http(s):// URLs with an administrator's
token ($XCE_TOKEN or --token-file); a follower forwards the request to
the leader. Only root and the configuration's admins may. A server to
join runs already: xce serve --raft RAFTADDR without --peers.
docs/ha.md.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := server.client().ChangeMember(cmd.Context(), args[0], join); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", args[0], done)
			return nil
		},
	}
	serverFlag(cmd, &server)
	return cmd
}

func newMembersCmd() *cobra.Command {
	var server conn
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "members [--json] --server LIST",
		Short: "Show each server of a replicated control plane: its role, raft term and last index",
		Long: `Ask each server of --server (a comma-separated list of sockets or
http(s):// URLs) what it says of itself: its raft ID and address, its API
address, its role (leader or follower), its raft term and the index of its
last raft entry. A server that does not answer is reported on stderr and
the command fails after showing the others. --json prints
{"members": [{"id", "api", "raft", "role", "term", "last_index"}]}.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			members, err := server.client().Members(cmd.Context())
			if asJSON {
				if members == nil {
					members = []api.Member{}
				}
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if jerr := enc.Encode(api.MembersReply{Members: members}); jerr != nil {
					return jerr
				}
			} else {
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 8, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tAPI\tROLE\tTERM\tLAST_INDEX")
				for _, m := range members {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\n", safe(m.ID), safe(m.API), safe(m.Role), m.Term, m.LastIndex)
				}
				if ferr := tw.Flush(); ferr != nil {
					return ferr
				}
			}
			return err
		},
	}
	serverFlag(cmd, &server)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
