// Command xce is the xce batch scheduler's command-line tool. See
// `xce --help` and README.md.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/xce-sched/xce/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
