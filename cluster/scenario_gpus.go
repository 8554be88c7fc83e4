package cluster

import (
	"github.com/xce-sched/xce/gpureq"
)

// This file loads what a scenario says of GPUs (docs/gpus.md): a host's
// gpus and gpu_model, a job's gpu.

// hostGPUs reads a host's gpus field: N devices, 0 … gpureq.MaxDevices,
// become the host's capacity of the consumable ngpus_physical (added to
// c.Resources at the first host that has gpus). gpu_model needs gpus.
func (l *loader) hostGPUs(fs *fieldSet, hr *hostResources) error {
	if !l.has(fs, "gpus") {
		if l.has(fs, "gpu_model") {
			return l.errAt(fs.value("gpu_model"), fieldPath(fs.path, "gpu_model"), "gpu_model is the model of the host's GPUs: give their number too (gpus: N)")
		}
		return nil
	}
	n, err := l.intField(fs, "gpus", 0, gpureq.MaxDevices, 0)
	if err != nil {
		return err
	}
	name := gpureq.Resource
	if _, seen := l.resIDs[name]; !seen {
		kn, path := fs.value("gpus"), fieldPath(fs.path, "gpus")
		what := "resource " + quote(name) + " (the hosts' gpus)"
		if err := l.defineAttr(kn, path, name, what); err != nil {
			return err
		}
		if err := l.defineAttr(kn, path, "max"+name, "the total of "+what); err != nil {
			return err
		}
		l.resIDs[name] = ResID(len(l.c.Resources))
		l.c.Resources = append(l.c.Resources, name)
	}
	hr.names = append(hr.names, name)
	hr.vals = append(hr.vals, float64(n))
	return nil
}

// jobGPU reads a job's gpu field, a GPU requirement in bsub -gpu's
// syntax, into j.GPU, and merges what it reserves into j.Req
// (gpureq.Merge): a job with gpu has a simple resreq whose rusage[] does
// not name ngpus_physical.
func (l *loader) jobGPU(fs *fieldSet, j *Job) error {
	if !l.has(fs, "gpu") {
		return nil
	}
	s, n, err := l.strField(fs, "gpu", "")
	if err != nil {
		return err
	}
	path := fieldPath(fs.path, "gpu")
	g, err := gpureq.Parse(s)
	if err != nil {
		se := l.errAt(n, path, "%v", err)
		se.cause = err
		return se
	}
	req, err := gpureq.Merge(j.Req, g)
	if err != nil {
		return l.errAt(n, path, "%v", err)
	}
	j.Req, j.GPU = req, &g
	return nil
}
