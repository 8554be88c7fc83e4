//go:build linux

// Package launch runs one job's attempt on the local host, for xce's
// agent: the command or job script as the submitting user, in its own
// session and process group, with the submit environment plus xce's and
// LSF's job variables, its output appended (or written over) to the -o and
// -e files, opened with the user's permissions. Kill ends the whole
// process group as LSF's bkill does; Wait reaps the job and says how it
// ended. Linux only. docs/launch.md has the details and the differences
// from LSF and Slurm.
package launch
