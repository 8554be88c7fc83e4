package clip

import "testing"

// TestClip: cuts by characters (not bytes) for Text and Quote, by bytes at
// a character boundary for Msg.
func TestClip(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Text("abcdef", 3), "abc..."},
		{Text("abc", 3), "abc"},
		{Text("ééééé", 2), "éé..."},
		{Quote("abcdef", 3), `"abc"...`},
		{Quote("a\"b", 3), `"a\"b"`},
		{Msg("abcdefgh", 6), "abc..."},
		{Msg("aéééé", 6), "aé..."},
		{Msg("short", 6), "short"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
