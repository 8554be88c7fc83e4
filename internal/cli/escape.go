package cli

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/live"
)

// safe returns s as the CLI prints a string that a user or a file gave
// (a job's name, command, paths, a host or queue name, a reason quoting
// them), so that printing it cannot drive the terminal nor break a
// table's columns: a tab, newline or carriage return is written \t, \n,
// \r; any other ASCII control character (ESC, DEL, ...) \xHH; any other
// character that is not printable (a C1 control, a bidirectional
// override such as U+202E, a line or paragraph separator, a format
// character) \uHHHH; a byte that is not valid UTF-8 \xHH. Everything else, spaces and
// backslashes included, is kept as is.
func safe(s string) string {
	i := 0
	for i < len(s) && ' ' <= s[i] && s[i] < utf8.RuneSelf && s[i] != 0x7f {
		i++
	}
	if i == len(s) {
		return s // printable ASCII: the common case
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == ' ' || unicode.IsPrint(r):
			b.WriteString(s[i : i+size])
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

// safeAll returns safe of each of ss.
func safeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = safe(s)
	}
	return out
}

// safeKeys returns m with its keys made safe (nil for nil).
func safeKeys[V any](m map[string]V) map[string]V {
	if m == nil {
		return nil
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[safe(k)] = v
	}
	return out
}

// safeJob returns j with every string in it made safe, for printing.
func safeJob(j api.JobInfo) api.JobInfo {
	for _, p := range []*string{&j.Name, &j.User, &j.Queue, &j.State, &j.Reason, &j.Detail, &j.Signal, &j.EndReason, &j.ResReq, &j.GPU, &j.Stdout} {
		*p = safe(*p)
	}
	j.Command = safeAll(j.Command)
	j.Hosts, j.GPUs, j.ForecastHosts = safeKeys(j.Hosts), safeKeys(j.GPUs), safeKeys(j.ForecastHosts)
	if j.HostReasons != nil {
		hr := make([]live.HostReason, len(j.HostReasons))
		for i, h := range j.HostReasons {
			hr[i] = live.HostReason{Text: safe(h.Text), Hosts: h.Hosts}
		}
		j.HostReasons = hr
	}
	return j
}

// safeJobs returns safeJob of each of jobs.
func safeJobs(jobs []api.JobInfo) []api.JobInfo {
	out := make([]api.JobInfo, len(jobs))
	for i, j := range jobs {
		out[i] = safeJob(j)
	}
	return out
}
