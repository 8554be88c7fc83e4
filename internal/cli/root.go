// Package cli implements xce's commands (cobra) and their rendering:
// decision tables, pending-reason text and JSON output.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Version is xce's version, printed by `xce version`.
const Version = "0.1.0-dev"

// Exit codes.
const (
	ExitOK      = 0 // success
	ExitFailure = 1 // a runtime failure
	ExitUsage   = 2 // bad usage or bad input
)

// inputError marks an error caused by the user's input (bad flags, a bad
// scenario file): exit code 2.
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }

func badInput(err error) error { return inputError{err} }

// Run executes the xce command line args, writing to stdout and stderr, and
// returns the process exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintln(stderr, "xce:", err)
	var in inputError
	if errors.As(err, &in) || strings.HasPrefix(err.Error(), "unknown command") {
		return ExitUsage
	}
	return ExitFailure
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "xce",
		Short:         "xce: a batch job scheduler for HPC clusters",
		Long:          "xce places sequential and parallel jobs on the hosts of a cluster, honouring LSF-style\nresource requirements, and tells you exactly why a job is pending.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	// Flag errors (unknown flag, missing argument) are usage errors.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return badInput(err) })
	root.AddCommand(
		&cobra.Command{
			Use:   "version",
			Short: "Print xce's version",
			Args:  usageArgs(cobra.NoArgs),
			Run: func(cmd *cobra.Command, _ []string) {
				fmt.Fprintln(cmd.OutOrStdout(), "xce", Version)
			},
		},
		newScheduleCmd(),
		newLimitsCmd(),
		newSimCmd(),
		newServeCmd(),
		newAgentCmd(),
		newSubmitCmd(),
		newJobsCmd(),
		newWhyCmd(),
		newKillCmd(),
		newHostsCmd(),
		newHistoryCmd(),
		newQueuesCmd(),
		newHostCmd(),
		newReconfigCmd(),
		newTokenCmd(),
		newImportCmd(),
		newServerCmd(),
	)
	return root
}

// usageArgs wraps a cobra argument validator so its errors exit with 2.
func usageArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return badInput(err)
		}
		return nil
	}
}
