package auth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TestIssueVerify: a token issued for alice says alice; one signed with
// another key, expired, with another algorithm, with "none", or tampered
// with is refused.
func TestIssueVerify(t *testing.T) {
	dir := t.TempDir()
	is, err := LoadKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v (%v), want 0600", st.Mode().Perm(), err)
	}
	again, err := LoadKey(dir)
	if err != nil || string(again.key) != string(is.key) {
		t.Fatalf("the key is not kept: %v", err)
	}
	tok, err := is.Issue(Identity{User: "alice", UID: 1001, GID: 100}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := is.Verify(tok); err != nil || id != (Identity{User: "alice", UID: 1001, GID: 100}) {
		t.Errorf("verify: %+v, %v", id, err)
	}
	other, _ := LoadKey(t.TempDir())
	if _, err := other.Verify(tok); err == nil {
		t.Error("another key's issuer accepted the token")
	}
	parts := strings.Split(tok, ".")
	payload := []byte(parts[1])
	payload[10] ^= 1 // one bit of the claims changed (still base64url)
	if payload[10] == '-' || payload[10] == '_' {
		payload[10] = 'A'
	}
	tampered := parts[0] + "." + string(payload) + "." + parts[2]
	if _, err := is.Verify(tampered); err == nil {
		t.Error("a tampered token was accepted")
	}
	later := *is
	later.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if _, err := later.Verify(tok); err == nil {
		t.Error("an expired token was accepted")
	}
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"sub": "root", "iss": "xce", "exp": time.Now().Add(time.Hour).Unix()}).
		SignedString(jwt.UnsafeAllowNoneSignatureType)
	if _, err := is.Verify(none); err == nil {
		t.Error("an unsigned (alg none) token was accepted")
	}
	hs512, _ := jwt.NewWithClaims(jwt.SigningMethodHS512, jwt.MapClaims{"sub": "root", "iss": "xce", "exp": time.Now().Add(time.Hour).Unix()}).SignedString(is.key)
	if _, err := is.Verify(hs512); err == nil {
		t.Error("an HS512 token was accepted")
	}
	for _, ttl := range []time.Duration{0, -time.Second, MaxTTL + time.Second} {
		if _, err := is.Issue(Identity{User: "alice"}, ttl); err == nil {
			t.Errorf("ttl %v accepted", ttl)
		}
	}
}

// TestLoadKeyRefuses: a key others may read, or a file that is not a key,
// is refused.
func TestLoadKeyRefuses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, KeyFile)
	if err := os.WriteFile(path, []byte(strings.Repeat("ab", 32)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(dir); err == nil || !strings.Contains(err.Error(), "owner only") {
		t.Errorf("a world-readable key: %v", err)
	}
	if err := os.WriteFile(path, []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o600)
	if _, err := LoadKey(dir); err == nil || !strings.Contains(err.Error(), "not a signing key") {
		t.Errorf("a file that is not a key: %v", err)
	}
}

// TestCSRF: the anti-forgery token of a session token checks with the
// same key and token only: another token, another key, a truncated or
// empty value fail.
func TestCSRF(t *testing.T) {
	is, err := LoadKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	other, err := LoadKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := is.CSRF("tok-a")
	if len(c) != 64 {
		t.Errorf("CSRF %q: want 64 hex digits", c)
	}
	for _, tc := range []struct {
		is          *Issuer
		token, csrf string
		want        bool
	}{
		{is, "tok-a", c, true},
		{is, "tok-b", c, false},
		{other, "tok-a", c, false},
		{is, "tok-a", c[:63], false},
		{is, "tok-a", "", false},
	} {
		if got := tc.is.CheckCSRF(tc.token, tc.csrf); got != tc.want {
			t.Errorf("CheckCSRF(%q, %q): %v, want %v", tc.token, tc.csrf, got, tc.want)
		}
	}
}

// TestExpiry: a token's expiry is its issue time plus its lifetime, to
// the second; a forged token has none.
func TestExpiry(t *testing.T) {
	is, err := LoadKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1_800_000_000, 0)
	is.now = func() time.Time { return at }
	tok, err := is.Issue(Identity{User: "alice", UID: 1, GID: 1}, 90*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	exp, err := is.Expiry(tok)
	if err != nil || !exp.Equal(time.Unix(1_800_005_400, 0)) {
		t.Errorf("Expiry %v, %v; want 1800005400", exp, err)
	}
	other, _ := LoadKey(t.TempDir())
	if _, err := other.Expiry(tok); err == nil {
		t.Error("another key's issuer read the token's expiry")
	}
}
