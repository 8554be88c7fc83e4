package daemon

import (
	"net"
	"testing"
)

// TestAdvertised: a member's API address is the host --listen names,
// with the port the listener got; the listener's own address when
// --listen names no host (every interface).
func TestAdvertised(t *testing.T) {
	for _, c := range []struct{ listen, got, want string }{
		{"s1.example:7700", "10.0.0.1:7700", "s1.example:7700"},
		{"127.0.0.1:0", "127.0.0.1:41234", "127.0.0.1:41234"},
		{"[::1]:7700", "[::1]:7700", "[::1]:7700"},
		{":7700", "[::]:7700", "[::]:7700"},
		{"0.0.0.0:7700", "0.0.0.0:7700", "0.0.0.0:7700"},
	} {
		got, err := net.ResolveTCPAddr("tcp", c.got)
		if err != nil {
			t.Fatal(err)
		}
		if a := advertised(c.listen, got); a != c.want {
			t.Errorf("advertised(%q, %s) = %q, want %q", c.listen, c.got, a, c.want)
		}
	}
}
