package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/runtime"
)

// jobReport is one job's decision as `xce schedule` prints it.
type jobReport struct {
	// ID is the job's, or for an element of an array its array's, with
	// Index its index (0 for a job that is no element).
	ID     cluster.JobID
	Index  int64
	User   string
	Queue  string
	State  string
	Hosts  []hostSlots // RUN: in host order
	GPUs   []hostGPUs  // RUN: the devices held on each host, in host order; none without GPUs
	Reason string      // PEND: main reason code
	Detail string      // PEND: resource, shared resource or limit name
	Text   string      // PEND: human text of the main reason
	// HostReasons are per-host reason counts, most hosts first.
	HostReasons []hostReason
	// Start and End (seconds) are shown with times; End only when DONE.
	Start, End int64
	// Reserved is a pending job's reservation (backfilling): start time
	// and hosts; nil when it has none.
	Reserved *reservedAt
}

type reservedAt struct {
	Start int64
	Hosts []hostSlots
}

// hostList renders an allocation's slots per host, in host order.
func hostList(c *cluster.Cluster, a *cluster.JobAlloc) []hostSlots {
	slots := make([]int, len(c.Hosts))
	for _, h := range a.Hosts {
		slots[h.Host] += h.Slots
	}
	var out []hostSlots
	for h, n := range slots {
		if n > 0 {
			out = append(out, hostSlots{c.Hosts[h].Name, n})
		}
	}
	return out
}

type hostSlots struct {
	Host  string
	Slots int
}

// hostGPUs is the devices a job holds on one host.
type hostGPUs struct {
	Host    string
	Devices []int
}

// gpuList renders the devices an allocation holds per host, in host
// order; nil when it holds none.
func gpuList(c *cluster.Cluster, a *cluster.JobAlloc) []hostGPUs {
	devs := make([][]int, len(c.Hosts))
	for _, h := range a.Hosts {
		devs[h.Host] = append(devs[h.Host], h.GPUs.List()...)
	}
	var out []hostGPUs
	for h, d := range devs {
		if len(d) > 0 {
			out = append(out, hostGPUs{c.Hosts[h].Name, d})
		}
	}
	return out
}

type hostReason struct {
	Key   string // code, or code:detail
	Text  string // e.g. "not enough mem"
	Hosts int
}

type report struct {
	jobs  []jobReport
	times bool // show start and end times
}

func newReport(s *runtime.Scheduler, jobs []*framework.Job, times bool) *report {
	c := s.Cluster
	r := &report{times: times}
	for _, j := range jobs {
		id, index := j.Spec.ID, int64(0)
		if j.Spec.Array != 0 {
			id, index = j.Spec.Array, j.Spec.ArrayIndex
		}
		jr := jobReport{ID: id, Index: index, User: j.Spec.User, Queue: c.Queues[j.Spec.Queue].Name, State: j.State.String(), Start: j.Start, End: j.End}
		if j.State != framework.Pending {
			jr.Hosts = hostList(c, j.Alloc)
			jr.GPUs = gpuList(c, j.Alloc)
			if j.State == framework.Suspended { // where it waits to resume, and why
				jr.Reason, jr.Text = j.Reasons.Main.String(), j.Reasons.Main.Text("")
			}
		} else {
			if j.Reserved != nil {
				jr.Reserved = &reservedAt{Start: j.Reserved.Start, Hosts: hostList(c, j.Reserved.Alloc)}
			}
			pr := &j.Reasons
			jr.Reason = pr.Main.String()
			jr.Detail = s.MainDetail(pr)
			jr.Text = pr.Main.Text(jr.Detail)
			switch pr.Main {
			case framework.BadRequest:
				jr.Text = pr.Main.Text(pr.Note)
			case framework.Dependency, framework.DependencyNeverSatisfied:
				jr.Text = pr.Main.Text(pr.Note)
			case framework.Priority:
				if pr.Note != "" { // deferred beyond max_job_test
					jr.Text = pr.Note
				}
			}
			if pr.Main == framework.SharedResource && len(pr.Shared) > 1 {
				names := make([]string, len(pr.Shared))
				for i, id := range pr.Shared {
					names[i] = c.Shared[id].Name
				}
				jr.Text = pr.Main.Text(strings.Join(names, ", "))
			}
			for _, hc := range pr.Hosts {
				d := s.ReasonDetail(hc.Reason, hc.Detail)
				key := hc.Reason.String()
				if d != "" {
					key += ":" + d
				}
				jr.HostReasons = append(jr.HostReasons, hostReason{key, hc.Reason.Text(d), hc.Hosts})
			}
		}
		r.jobs = append(r.jobs, jr)
	}
	return r
}

// writeJSON prints {"jobs": [...]} with one object per job in picking
// order; object keys keep a fixed order (hosts in host order, host reasons
// most hosts first) so the output is stable.
func (r *report) writeJSON(w io.Writer) error {
	var b bytes.Buffer
	b.WriteString("{\"jobs\": [")
	for i, j := range r.jobs {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  {")
		fmt.Fprintf(&b, "\"id\": %d, ", j.ID)
		if j.Index != 0 {
			fmt.Fprintf(&b, "\"array_index\": %d, ", j.Index)
		}
		fmt.Fprintf(&b, "\"state\": %s", quoteJSON(j.State))
		if j.State != "PEND" {
			b.WriteString(", \"hosts\": ")
			writeHostsJSON(&b, j.Hosts)
			if len(j.GPUs) > 0 {
				b.WriteString(", \"gpus\": ")
				writeGPUsJSON(&b, j.GPUs)
			}
			if r.times {
				fmt.Fprintf(&b, ", \"start\": %d", j.Start)
				if j.State == "DONE" {
					fmt.Fprintf(&b, ", \"end\": %d", j.End)
				}
			}
			if j.Reason != "" {
				fmt.Fprintf(&b, ", \"reason\": %s, \"message\": %s", quoteJSON(j.Reason), quoteJSON(j.Text))
			}
		} else {
			fmt.Fprintf(&b, ", \"reason\": %s", quoteJSON(j.Reason))
			if j.Detail != "" {
				fmt.Fprintf(&b, ", \"detail\": %s", quoteJSON(j.Detail))
			}
			fmt.Fprintf(&b, ", \"message\": %s", quoteJSON(j.Text))
			if j.Reserved != nil {
				fmt.Fprintf(&b, ", \"reserved\": {\"start\": %d, \"hosts\": ", j.Reserved.Start)
				writeHostsJSON(&b, j.Reserved.Hosts)
				b.WriteString("}")
			}
			if len(j.HostReasons) > 0 {
				b.WriteString(", \"host_reasons\": {")
				for k, hr := range j.HostReasons {
					if k > 0 {
						b.WriteString(", ")
					}
					fmt.Fprintf(&b, "%s: %d", quoteJSON(hr.Key), hr.Hosts)
				}
				b.WriteString("}")
			}
		}
		b.WriteString("}")
	}
	b.WriteString("\n]}\n")
	_, err := w.Write(b.Bytes())
	return err
}

// writeHostsJSON writes {"host": slots, ...} in the given order.
func writeHostsJSON(b *bytes.Buffer, hosts []hostSlots) {
	b.WriteString("{")
	for k, h := range hosts {
		if k > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "%s: %d", quoteJSON(h.Host), h.Slots)
	}
	b.WriteString("}")
}

// writeGPUsJSON writes {"host": [device, ...], ...} in the given order.
func writeGPUsJSON(b *bytes.Buffer, gpus []hostGPUs) {
	b.WriteString("{")
	for k, h := range gpus {
		if k > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "%s: [", quoteJSON(h.Host))
		for i, d := range h.Devices {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprint(b, d)
		}
		b.WriteString("]")
	}
	b.WriteString("}")
}

func quoteJSON(s string) string {
	q, _ := json.Marshal(s) // a string always marshals
	return string(q)
}

// writeTable prints a bjobs-like table; a pending job's reason follows on
// its row, its host reasons on the next line, as LSF's bjobs -p does
// ("3 hosts: not enough mem; 1 host: closed").
func (r *report) writeTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if r.times {
		fmt.Fprintln(tw, "JOBID\tUSER\tQUEUE\tSTATE\tSTART\tEND\tHOSTS / PENDING REASON")
	} else {
		fmt.Fprintln(tw, "JOBID\tUSER\tQUEUE\tSTATE\tHOSTS / PENDING REASON")
	}
	for _, j := range r.jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t", jobName(j.ID, j.Index), j.User, j.Queue, j.State)
		if r.times {
			start, end := "-", "-"
			if j.State != "PEND" {
				start = fmt.Sprint(j.Start)
			}
			if j.State == "DONE" {
				end = fmt.Sprint(j.End)
			}
			fmt.Fprintf(tw, "%s\t%s\t", start, end)
		}
		if j.State != "PEND" {
			parts := make([]string, len(j.Hosts))
			for i, h := range j.Hosts {
				parts[i] = fmt.Sprintf("%s*%d", h.Host, h.Slots)
				for _, g := range j.GPUs {
					if g.Host == h.Host {
						parts[i] += " (gpus " + joinInts(g.Devices) + ")"
					}
				}
			}
			if j.Reason != "" {
				fmt.Fprintf(tw, "%s (%s: %s)\n", strings.Join(parts, " "), j.Reason, j.Text)
				continue
			}
			fmt.Fprintln(tw, strings.Join(parts, " "))
			continue
		}
		fmt.Fprintf(tw, "%s: %s\n", j.Reason, j.Text)
		pad := "\t\t\t\t"
		if r.times {
			pad += "\t\t"
		}
		if hr := renderHostReasons(j.HostReasons); hr != "" {
			fmt.Fprintf(tw, "%s  %s\n", pad, hr)
		}
		if j.Reserved != nil {
			parts := make([]string, len(j.Reserved.Hosts))
			for i, h := range j.Reserved.Hosts {
				parts[i] = fmt.Sprintf("%s*%d", h.Host, h.Slots)
			}
			fmt.Fprintf(tw, "%s  reserved to start at %d on %s\n", pad, j.Reserved.Start, strings.Join(parts, " "))
		}
	}
	return tw.Flush()
}

// joinInts renders devices as "0,1,3".
func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ",")
}

// renderHostReasons renders counts as LSF does: "3 hosts: not enough mem;
// 1 host: closed".
func renderHostReasons(hrs []hostReason) string {
	parts := make([]string, len(hrs))
	for i, hr := range hrs {
		unit := "hosts"
		if hr.Hosts == 1 {
			unit = "host"
		}
		parts[i] = fmt.Sprintf("%d %s: %s", hr.Hosts, unit, hr.Text)
	}
	return strings.Join(parts, "; ")
}

// jobName renders a job's ID as LSF's bjobs does: ID, or ID[INDEX] for an
// element of an array.
func jobName[ID ~int64](id ID, index int64) string {
	if index == 0 {
		return fmt.Sprint(id)
	}
	return fmt.Sprintf("%d[%d]", id, index)
}
