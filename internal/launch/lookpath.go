//go:build linux

package launch

import (
	"os"
	"path/filepath"
	"strings"
)

// lookCommand finds the program a shell would exec for name, the first
// word of a job's command, in the job's environment env, for a job whose
// working directory is cwd; ok is false when it cannot tell, and the
// command then runs through the shell (which also reports a missing
// command as sh does, exit 127). A name with a slash is used as it is (a
// relative one resolves from cwd, as the job's exec does); a bare name
// is searched in env's PATH in order (an empty element is the working
// directory, as in POSIX sh), taking the first regular file with an
// execute bit. The check is the agent's view, not the job user's: when
// the exec then fails (EACCES for a file the user may not run, ENOEXEC
// for a script without #!), Start runs the command through the shell
// instead, so the outcome is the shell's either way.
func lookCommand(name string, env []string, cwd string) (path string, ok bool) {
	if name == "" {
		return "", false
	}
	if strings.Contains(name, "/") {
		return name, true
	}
	pathVar, found := "", false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar, found = v, true // the last one wins, as in the shell
		}
	}
	if !found {
		return "", false // the shell's built-in default PATH applies
	}
	for _, dir := range strings.Split(pathVar, ":") {
		if dir == "" {
			dir = "."
		}
		cand := filepath.Join(dir, name)
		check := cand
		if !filepath.IsAbs(check) {
			check = filepath.Join(cwd, check)
			cand = "./" + cand
		}
		fi, err := os.Stat(check)
		if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return cand, true
		}
	}
	return "", false
}
