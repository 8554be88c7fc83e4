package api

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/user"
	"strconv"

	"golang.org/x/sys/unix"
)

// ListenUnix listens on the Unix socket at path, mode 0666 (any local user
// may connect; each is known by its uid). A socket file left by a server
// that is gone is replaced; a live server's socket is not.
func ListenUnix(path string) (net.Listener, error) {
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		return nil, fmt.Errorf("%s: a server is already listening there", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o666); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// ConnContext is an http.Server's ConnContext: for a connection on a Unix
// socket it puts the peer's identity in ctx, from the kernel's
// credentials of the peer (SO_PEERCRED) and its name from the user
// database (a uid without a name is "uid" and the number). Other
// connections get no identity.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return ctx
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return ctx
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil || cerr != nil {
		return ctx
	}
	name := "uid" + strconv.Itoa(int(cred.Uid))
	if u, err := user.LookupId(strconv.Itoa(int(cred.Uid))); err == nil {
		name = u.Username
	}
	return WithCaller(ctx, Caller{User: name, UID: cred.Uid, GID: cred.Gid})
}
