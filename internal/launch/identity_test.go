//go:build linux

package launch

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The user and supplementary group the identity tests create when they
// are missing, and delete afterwards only when they created them.
const (
	testUserName  = "xcetest1"
	testGroupName = "xcetestg1"
)

func TestResolveIdentity(t *testing.T) {
	db := func(uid uint32) (string, []string, error) {
		if uid == 1000 {
			return "alice", []string{"1000", "27", "100"}, nil
		}
		if uid == 0 {
			return "root", []string{"0"}, nil
		}
		return "", nil, user.UnknownUserIdError(int(uid))
	}
	spec := func(uid, gid uint32, name string, root bool) *Spec {
		return &Spec{Job: 1, UID: uid, GID: gid, User: name, AllowRoot: root}
	}
	// A root agent.
	id, err := resolveIdentity(spec(1000, 1000, "alice", false), 0, 0, db)
	if err != nil || !id.set || id.uid != 1000 || id.gid != 1000 || !slices.Equal(id.groups, []int{1000, 27, 100}) {
		t.Errorf("alice: %+v %v", id, err)
	}
	id, err = resolveIdentity(spec(1000, 50, "", false), 0, 0, db)
	if err != nil || id.gid != 50 || !slices.Equal(id.groups, []int{50, 1000, 27, 100}) {
		t.Errorf("alice with gid 50: %+v %v, want gid 50 first then her groups", id, err)
	}
	for name, c := range map[string]struct {
		s    *Spec
		want error
	}{
		"root without AllowRoot": {spec(0, 0, "root", false), ErrRoot},
		"unknown uid":            {spec(2000, 2000, "", false), ErrIdentity},
		"name mismatch":          {spec(1000, 1000, "bob", false), ErrIdentity},
	} {
		if _, err := resolveIdentity(c.s, 0, 0, db); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if id, err := resolveIdentity(spec(0, 0, "root", true), 0, 0, db); err != nil || !id.set {
		t.Errorf("root with AllowRoot: %+v %v", id, err)
	}
	// An agent running as uid 1000, gid 1000.
	if id, err := resolveIdentity(spec(1000, 1000, "alice", false), 1000, 1000, db); err != nil || id.set {
		t.Errorf("own uid: %+v %v, want no credential change", id, err)
	}
	for name, c := range map[string]struct {
		s    *Spec
		want error
	}{
		"other uid":     {spec(1001, 1000, "", false), ErrIdentity},
		"other gid":     {spec(1000, 27, "", false), ErrIdentity},
		"root":          {spec(0, 0, "", false), ErrRoot},
		"root, allowed": {spec(0, 0, "", true), ErrIdentity},
	} {
		if _, err := resolveIdentity(c.s, 1000, 1000, db); !errors.Is(err, c.want) {
			t.Errorf("non-root agent, %s: %v, want %v", name, err, c.want)
		}
	}
}

// testUser returns the test user, creating it (and its supplementary
// group) with useradd when missing; the test skips when not root.
func testUser(t *testing.T) *user.User {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("identity tests run jobs as user %s and need root (uid %d now)", testUserName, os.Geteuid())
	}
	for _, cmd := range []string{"useradd", "groupadd", "userdel", "groupdel"} {
		if _, err := exec.LookPath(cmd); err != nil {
			t.Skipf("identity tests need %s: %v", cmd, err)
		}
	}
	if _, err := user.LookupGroup(testGroupName); err != nil {
		runCmd(t, "groupadd", testGroupName)
		t.Cleanup(func() { runCmdCleanup(t, "groupdel", testGroupName) })
	}
	if _, err := user.Lookup(testUserName); err != nil {
		runCmd(t, "useradd", "--no-create-home", "--user-group", "--groups", testGroupName,
			"--shell", "/usr/sbin/nologin", testUserName)
		t.Cleanup(func() { runCmdCleanup(t, "userdel", testUserName) })
	}
	u, err := user.Lookup(testUserName)
	if err != nil {
		t.Fatalf("user %s: %v", testUserName, err)
	}
	return u
}

func runCmd(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}

func runCmdCleanup(t *testing.T, name string, args ...string) {
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Errorf("cleanup: %s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}

// identityDirs is a tree the test user can reach: top (0755) holds home
// (the user's), rootonly (root's, 0755: the user may read, not write),
// private (root's, 0700) and work (the work base, 0711).
type identityDirs struct{ top, home, rootonly, private, work string }

func makeIdentityDirs(t *testing.T, uid, gid int) identityDirs {
	t.Helper()
	top, err := os.MkdirTemp("", "xce-launch-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(top); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	d := identityDirs{
		top:      top,
		home:     filepath.Join(top, "home"),
		rootonly: filepath.Join(top, "rootonly"),
		private:  filepath.Join(top, "private"),
		work:     filepath.Join(top, "work"),
	}
	for _, c := range []struct {
		path string
		mode fs.FileMode
	}{{top, 0o755}, {d.home, 0o755}, {d.rootonly, 0o755}, {d.private, 0o700}, {d.work, 0o711}} {
		if err := os.Mkdir(c.path, c.mode); err != nil && !errors.Is(err, fs.ErrExist) {
			t.Fatal(err)
		}
		if err := os.Chmod(c.path, c.mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(d.home, uid, gid); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestIdentity(t *testing.T) {
	u := testUser(t)
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	d := makeIdentityDirs(t, uid, gid)
	spec := func() Spec {
		s := testSpec(d.home)
		s.User, s.UID, s.GID, s.AllowRoot = u.Username, uint32(uid), uint32(gid), false
		s.WorkBase = d.work
		return s
	}

	t.Run("runs as the user with the user's groups", func(t *testing.T) {
		leakCheck(t)
		s := spec()
		s.Stdout = "ids.out"
		s.Command = []string{"sh", "-c", "id -u; id -g; id -G"}
		run(t, s)
		lines := strings.Split(readFile(t, filepath.Join(d.home, "ids.out")), "\n")
		if len(lines) < 3 || lines[0] != u.Uid || lines[1] != u.Gid {
			t.Fatalf("id output %q, want uid %s gid %s", lines, u.Uid, u.Gid)
		}
		want, err := u.GroupIds()
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, u.Gid)
		got := strings.Fields(lines[2])
		slices.Sort(want)
		slices.Sort(got)
		if want = slices.Compact(want); !slices.Equal(got, want) {
			t.Errorf("id -G: %q, want %q", got, want)
		}
		fi, err := os.Stat(filepath.Join(d.home, "ids.out"))
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != uid || int(st.Gid) != gid {
			t.Errorf("output file owned by %d:%d, want the user's %d:%d", st.Uid, st.Gid, uid, gid)
		}
	})

	t.Run("script as the user", func(t *testing.T) {
		leakCheck(t)
		s := spec()
		s.Stdout = "script.out"
		s.Script = "#BSUB -q normal\nid -un\n"
		run(t, s)
		if got := readFile(t, filepath.Join(d.home, "script.out")); got != u.Username+"\n" {
			t.Errorf("output %q, want %q", got, u.Username)
		}
		if _, err := os.Stat(workDir(d.work, 42, 1)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("work directory: %v, want removed", err)
		}
	})

	t.Run("root refused", func(t *testing.T) {
		leakCheck(t)
		s := spec()
		s.User, s.UID, s.GID = "root", 0, 0
		s.Stdout = "root.out"
		s.Command = []string{"true"}
		if _, err := Start(context.Background(), s); !errors.Is(err, ErrRoot) {
			t.Errorf("Start: %v, want ErrRoot", err)
		}
		if _, err := os.Stat(filepath.Join(d.home, "root.out")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("root.out: %v, want not created", err)
		}
	})

	t.Run("-o in a directory the user cannot write", func(t *testing.T) {
		leakCheck(t)
		s := spec()
		s.Stdout = filepath.Join(d.rootonly, "out.%J")
		s.Command = []string{"true"}
		_, err := Start(context.Background(), s)
		if !errors.Is(err, ErrOutput) || !errors.Is(err, fs.ErrPermission) {
			t.Errorf("Start: %v, want ErrOutput and fs.ErrPermission", err)
		}
		if _, err := os.Stat(filepath.Join(d.rootonly, "out.42")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("out.42: %v, want not created", err)
		}
	})

	t.Run("-o through a symbolic link to root's file", func(t *testing.T) {
		leakCheck(t)
		secret := filepath.Join(d.rootonly, "secret")
		if err := os.WriteFile(secret, []byte("root's\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(d.home, "link")
		if err := os.Symlink(secret, link); err != nil {
			t.Fatal(err)
		}
		s := spec()
		s.Stdout = link
		s.Command = []string{"echo", "overwritten"}
		s.StdoutOverwrite = true
		if _, err := Start(context.Background(), s); !errors.Is(err, ErrOutput) || !errors.Is(err, fs.ErrPermission) {
			t.Errorf("Start: %v, want ErrOutput and fs.ErrPermission", err)
		}
		if got := readFile(t, secret); got != "root's\n" {
			t.Errorf("root's file now %q", got)
		}
	})

	t.Run("working directory the user cannot enter", func(t *testing.T) {
		leakCheck(t)
		s := spec()
		s.Cwd = d.private
		s.Stdout = filepath.Join(d.home, "cwd.out")
		s.Command = []string{"true"}
		if _, err := Start(context.Background(), s); !errors.Is(err, fs.ErrPermission) {
			t.Errorf("Start: %v, want fs.ErrPermission", err)
		}
	})

	t.Run("submitter name differs", func(t *testing.T) {
		leakCheck(t)
		s := spec()
		s.User = testUserName + "-other"
		s.Command = []string{"true"}
		if _, err := Start(context.Background(), s); !errors.Is(err, ErrIdentity) {
			t.Errorf("Start: %v, want ErrIdentity", err)
		}
	})

	t.Run("agent thread credentials unchanged", func(t *testing.T) {
		// The file-system ids and groups were changed on a thread that
		// ended: a file the agent creates now is root's.
		path := filepath.Join(d.rootonly, "agent")
		for range 20 {
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != os.Geteuid() || int(st.Gid) != os.Getegid() {
				t.Fatalf("agent's file owned by %d:%d", st.Uid, st.Gid)
			}
		}
	})
}
