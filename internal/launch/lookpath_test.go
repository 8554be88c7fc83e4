//go:build linux

package launch

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// writeProg writes an executable (or not, by mode) file at path.
func writeProg(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func TestLookCommand(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	writeProg(t, filepath.Join(a, "noexec"), "x", 0o644)
	writeProg(t, filepath.Join(b, "noexec"), "x", 0o755)
	writeProg(t, filepath.Join(b, "prog"), "x", 0o700)
	writeProg(t, filepath.Join(dir, "here"), "x", 0o755)
	writeProg(t, filepath.Join(dir, "rel", "tool"), "x", 0o755)
	if err := os.MkdirAll(filepath.Join(a, "isdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeProg(t, filepath.Join(b, "isdir"), "x", 0o755)

	for _, c := range []struct {
		name string
		env  []string
		want string // "" when the shell must decide
	}{
		{"prog", []string{"PATH=" + a + ":" + b}, filepath.Join(b, "prog")},
		// a file without an execute bit is skipped, as execvp skips it
		{"noexec", []string{"PATH=" + a + ":" + b}, filepath.Join(b, "noexec")},
		{"isdir", []string{"PATH=" + a + ":" + b}, filepath.Join(b, "isdir")},
		{"missing", []string{"PATH=" + a + ":" + b}, ""},
		// an empty element is the working directory (POSIX)
		{"here", []string{"PATH=" + a + "::" + b}, "./here"},
		{"here", []string{"PATH=" + a + ":"}, "./here"},
		{"here", []string{"PATH=" + a}, ""},
		// a relative element is relative to the working directory
		{"tool", []string{"PATH=rel"}, "./rel/tool"},
		// the last PATH of the environment is the one in force
		{"prog", []string{"PATH=" + a, "PATH=" + b}, filepath.Join(b, "prog")},
		// no PATH: the shell's own default applies
		{"prog", []string{"HOME=/"}, ""},
		{"/bin/true", nil, "/bin/true"},
		{"./x/y", nil, "./x/y"},
		{"", []string{"PATH=" + b}, ""},
	} {
		got, ok := lookCommand(c.name, c.env, dir)
		if ok != (c.want != "") || got != c.want {
			t.Errorf("lookCommand(%q, %q) = %q, %v; want %q", c.name, c.env, got, ok, c.want)
		}
	}
}

// TestDirectExec: a command found in PATH runs without a shell, and one
// the exec cannot run goes to the shell, which gives its own answer.
func TestDirectExec(t *testing.T) {
	for _, c := range []struct {
		name      string
		prog      string // written to DIR/bin/prog, mode 0755; "" for none
		command   []string
		viaShell  bool
		exit      int
		outSuffix string
	}{
		{"found in PATH", "#!/bin/sh\necho direct \"$@\"\n", []string{"prog", "a b"}, false, 0, "direct a b\n"},
		// ENOEXEC: a script without #! is run by the shell, as execvp does
		{"script without #!", "echo by the shell\nexit 3\n", []string{"prog"}, true, 3, "by the shell\n"},
		{"not found", "", []string{"xce-not-here"}, true, 127, "not found\n"},
		{"path with a slash", "#!/bin/sh\necho slash\n", []string{"./bin/prog"}, false, 0, "slash\n"},
		{"quoting kept", "#!/bin/sh\nfor a; do echo \"[$a]\"; done\n", []string{"prog", "$HOME", "*", ""}, false, 0, "[$HOME]\n[*]\n[]\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			leakCheck(t)
			dir := t.TempDir()
			if c.prog != "" {
				writeProg(t, filepath.Join(dir, "bin", "prog"), c.prog, 0o755)
			}
			s := testSpec(dir)
			s.Env = []string{"PATH=" + filepath.Join(dir, "bin") + ":/usr/bin:/bin"}
			s.Command = c.command
			p := startT(t, s)
			if p.viaShell != c.viaShell {
				t.Errorf("via the shell: %v, want %v", p.viaShell, c.viaShell)
			}
			r := waitT(t, p, jobTimeout)
			if r.Err != nil || r.ExitCode != c.exit {
				t.Errorf("exit %d err %v, want %d", r.ExitCode, r.Err, c.exit)
			}
			if out := readFile(t, filepath.Join(dir, "xce-42.out")); !strings.HasSuffix(out, c.outSuffix) {
				t.Errorf("output %q, want it to end with %q", out, c.outSuffix)
			}
		})
	}
}

// TestDirectExecAsUser: a program the job's user may not run, earlier in
// PATH than one it may, is passed over as the shell would pass over it.
func TestDirectExecAsUser(t *testing.T) {
	u := testUser(t)
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	d := makeIdentityDirs(t, uid, gid)
	rootOnly := filepath.Join(d.rootonly, "bin")
	everyone := filepath.Join(d.top, "bin")
	writeProg(t, filepath.Join(rootOnly, "prog"), "#!/bin/sh\necho root-only\n", 0o700)
	writeProg(t, filepath.Join(everyone, "prog"), "#!/bin/sh\necho everyone\n", 0o755)

	leakCheck(t)
	s := testSpec(d.home)
	s.User, s.UID, s.GID, s.AllowRoot = u.Username, uint32(uid), uint32(gid), false
	s.WorkBase = d.work
	s.Env = []string{"PATH=" + rootOnly + ":" + everyone + ":/usr/bin:/bin"}
	s.Command = []string{"prog"}
	p := startT(t, s)
	if !p.viaShell {
		t.Errorf("ran without the shell; the direct exec of %s should have failed (EACCES)", rootOnly)
	}
	if r := waitT(t, p, jobTimeout); r.ExitCode != 0 || r.Err != nil {
		t.Errorf("exit %d err %v, want 0", r.ExitCode, r.Err)
	}
	if out := readFile(t, filepath.Join(d.home, "xce-42.out")); out != "everyone\n" {
		t.Errorf("output %q, want %q", out, "everyone\n")
	}
}
