package cli

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/xce-sched/xce/internal/agent"
	"github.com/xce-sched/xce/internal/api"
)

func newAgentCmd() *cobra.Command {
	var server, name, tokenFile, dir, ca string
	cmd := &cobra.Command{
		Use:   "agent --token-file FILE [--server ADDR] [--name HOST] [--dir DIR] [--ca FILE]",
		Short: "Run the agent of one host: it runs the jobs the server places there",
		Long: `Run the agent of one host of a configured cluster ('xce serve --config'):
it registers with the server at --server (host:port for plain HTTP, which
the server serves on loopback only, or an https:// URL; default
` + api.DefaultListen + `) as --name (default this machine's host name,
which must be a host of the configuration), with the agent token the
server wrote to its DATA/agent.token, copied to --token-file (mode 0600).
It runs each job as its submitter (when the agent runs as root), and
keeps its journal and the jobs' scripts in --dir (default
$TMPDIR/xce-agent-HOST; it must persist across restarts of the agent).
SIGINT or SIGTERM stops it: it kills its jobs and reports them lost (the
server puts rerunnable ones back to pending). docs/daemon.md has the
details.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tokenFile == "" {
				return badInput(errors.New("give --token-file: a copy of the server's DATA/agent.token"))
			}
			if name == "" {
				h, err := os.Hostname()
				if err != nil {
					return fmt.Errorf("host name: %w", err)
				}
				name = h
			}
			if dir == "" {
				dir = filepath.Join(os.TempDir(), "xce-agent-"+name)
			}
			tok, err := agent.ReadToken(tokenFile)
			if err != nil {
				return badInput(err)
			}
			var tlsCfg *tls.Config
			if ca != "" {
				pem, err := os.ReadFile(ca)
				if err != nil {
					return badInput(err)
				}
				pool := x509.NewCertPool()
				if !pool.AppendCertsFromPEM(pem) {
					return badInput(fmt.Errorf("%s: no PEM certificate", ca))
				}
				tlsCfg = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
			}
			logf := logTo(cmd.ErrOrStderr())
			a, err := agent.NewRemote(agent.RemoteOptions{Server: server, Name: name, Token: tok, Dir: dir, TLS: tlsCfg, Logf: logf})
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			logf("agent of %s, server %s, directory %s", name, server, dir)
			return a.Run(ctx)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&server, "server", api.DefaultListen, "the server's agent address: host:port, or an http:// or https:// URL; a comma-separated list for the members of a replicated control plane (docs/ha.md)")
	fl.StringVar(&name, "name", "", "the host this agent serves (default: this machine's host name)")
	fl.StringVar(&tokenFile, "token-file", "", "the agent token (a copy of the server's DATA/agent.token)")
	fl.StringVar(&dir, "dir", "", "the agent's directory: journal and job scripts (default $TMPDIR/xce-agent-HOST)")
	fl.StringVar(&ca, "ca", "", "the certificate authority (PEM) that signed the server's TLS certificate (default: the system's)")
	return cmd
}
