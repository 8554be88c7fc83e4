// Package slurmconf reads a Slurm cluster's configuration — slurm.conf(5),
// gres.conf(5) and, for accounts and QOS, a sacctmgr(1) script — and
// writes it as an xce scenario configuration (docs/scenario.md) with its
// slurm section (docs/slurm.md), which `xce import slurm-conf` prints and
// `--cluster slurm.conf` loads:
//
//   - NodeName lines (DEFAULT lines and host ranges included) become
//     hosts: CPUs (or Procs, else Boards × Sockets × CoresPerSocket ×
//     ThreadsPerCore) slots, RealMemory MB of mem, Feature tags, Gres GPUs
//     (their gres.conf Type as gpu_model), State, and Weight the host
//     order;
//   - PartitionName lines become queues: Nodes, Default (the default
//     partition is the first queue), State, PriorityTier (the queue's
//     priority), MaxTime and DefaultTime (the queue's default run limit),
//     and in the slurm section PriorityJobFactor, DefMemPerCPU,
//     DefMemPerNode, MaxTime and DefaultTime;
//   - SchedulerType=sched/backfill gives every queue the backfill policy,
//     sched/builtin fcfs; PriorityType=priority/multifactor the
//     multifactor picker with the Priority* parameters;
//   - every key, node or partition parameter xce does not use is listed
//     in a warning, never dropped silently.
//
// Errors are *slurm.Error values, "file:line: message". The parsers never
// panic and read a line of at most slurm.MaxLine bytes.
package slurmconf
