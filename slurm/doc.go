// Package slurm reads the value syntax that Slurm's configuration files,
// its accounting output and its job submissions share, and describes a
// Slurm job's request in xce's terms (docs/slurm.md):
//
//   - time strings (Duration): "MM", "MM:SS", "HH:MM:SS", "D-HH",
//     "D-HH:MM", "D-HH:MM:SS", "UNLIMITED", as slurm.conf(5), sbatch(1)
//     --time and sacct(1) write them;
//   - memory sizes (Memory): "2800", "4G", "2800Mc", "500000Mn", as
//     sbatch --mem/--mem-per-cpu and sacct's ReqMem write them;
//   - host lists (Hostlist): "n[1-4]", "n[01-10,12],g1", as slurm.conf's
//     NodeName and Nodes and sacct's NodeList write them;
//   - generic resources (GPUs): "gpu:2", "gpu:tesla:2", "gres/gpu=2";
//   - node features (Tag) and constraint expressions (Constraint):
//     sbatch --constraint "IB&(CPU-N|CPU-M)".
//
// Job is one job's request as these readers see it (workload/sacct,
// workload/slurmsim), and Job.ResReq turns it into an xce resource
// requirement. Every parser returns an error that names what is wrong and
// never panics; inputs are bounded (a value is at most MaxValue bytes, a
// host list expands to at most MaxHosts names).
package slurm
