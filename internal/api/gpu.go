package api

import "github.com/xce-sched/xce/internal/event"

// gpusOf returns the devices an allocation holds on each host (JobInfo's
// gpus), nil when it holds none.
func gpusOf(hosts []event.HostAlloc) map[string][]int {
	var gpus map[string][]int
	for _, h := range hosts {
		if len(h.GPUs) > 0 {
			if gpus == nil {
				gpus = map[string][]int{}
			}
			gpus[h.Host] = append(gpus[h.Host], h.GPUs...)
		}
	}
	return gpus
}
