// Package auth issues and checks the tokens that identify a user to the
// live scheduler over TCP (on the Unix socket the kernel says who the
// caller is): JSON Web Tokens (RFC 7519) signed with HMAC-SHA256 under a
// key kept in the data directory, with github.com/golang-jwt/jwt/v5.
package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// KeyFile is the name of the signing key's file in the data directory.
const KeyFile = "token.key"

// MaxTTL is the longest a token may live.
const MaxTTL = 366 * 24 * time.Hour

// Issuer signs and checks tokens with one key.
type Issuer struct {
	key []byte
	now func() time.Time
}

// Identity is who a valid token says the caller is.
type Identity struct {
	User string
	UID  uint32
	GID  uint32
}

// LoadKey returns the issuer of the key in dir's KeyFile, creating the
// file (mode 0600, 32 random bytes, hex) when missing. A key file that is
// not 64 hex digits, or that others may read, is refused.
func LoadKey(dir string) (*Issuer, error) {
	path := dir + string(os.PathSeparator) + KeyFile
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, err
		}
		_, err = f.WriteString(hex.EncodeToString(key) + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		return &Issuer{key: key, now: time.Now}, nil
	}
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s: mode %v: the signing key must be readable by its owner only (chmod 600)", path, st.Mode().Perm())
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("%s: not a signing key (64 hex digits)", path)
	}
	return &Issuer{key: key, now: time.Now}, nil
}

// NewIssuer returns the issuer of a key given as 64 hex digits (a
// replicated control plane's shared key, event.Keys); an error when it is
// not that.
func NewIssuer(keyHex string) (*Issuer, error) {
	key, err := hex.DecodeString(strings.TrimSpace(keyHex))
	if err != nil || len(key) != 32 {
		return nil, errors.New("not a signing key (64 hex digits)")
	}
	return &Issuer{key: key, now: time.Now}, nil
}

// Hex returns the issuer's key as 64 hex digits (for event.Keys).
func (i *Issuer) Hex() string { return hex.EncodeToString(i.key) }

type claims struct {
	UID uint32 `json:"uid"`
	GID uint32 `json:"gid"`
	jwt.RegisteredClaims
}

// Issue returns a token saying the caller is id, valid for ttl (at most
// MaxTTL).
func (is *Issuer) Issue(id Identity, ttl time.Duration) (string, error) {
	if ttl <= 0 || ttl > MaxTTL {
		return "", fmt.Errorf("token lifetime %v: want more than 0 and at most %v", ttl, MaxTTL)
	}
	if id.User == "" {
		return "", errors.New("a token needs a user")
	}
	now := is.now()
	c := claims{UID: id.UID, GID: id.GID, RegisteredClaims: jwt.RegisteredClaims{
		Subject: id.User, Issuer: "xce", IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(ttl))}}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(is.key)
}

// Verify returns who token says the caller is, or an error when it is not
// one this issuer signed with HS256, has expired, or names no user.
func (is *Issuer) Verify(token string) (Identity, error) {
	var c claims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return is.key, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithIssuer("xce"),
		jwt.WithExpirationRequired(), jwt.WithTimeFunc(is.now))
	if err != nil {
		return Identity{}, fmt.Errorf("token: %w", err)
	}
	if c.Subject == "" {
		return Identity{}, errors.New("token: no user")
	}
	return Identity{User: c.Subject, UID: c.UID, GID: c.GID}, nil
}

// Expiry returns when a token this issuer signed expires; the error of
// Verify for a token it would refuse.
func (is *Issuer) Expiry(token string) (time.Time, error) {
	var c claims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return is.key, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithIssuer("xce"),
		jwt.WithExpirationRequired(), jwt.WithTimeFunc(is.now))
	if err != nil {
		return time.Time{}, fmt.Errorf("token: %w", err)
	}
	return c.ExpiresAt.Time, nil
}

// CSRF returns the anti-forgery token that goes with a session token (a
// token kept in a browser's cookie, docs/dashboard.md): 64 hex digits,
// an HMAC-SHA256 under the signing key of a label and the token, so it
// needs no state and cannot be made without the key. A page of the
// server reads it and sends it back in a header with each change it
// asks for; another site can neither read it nor compute it.
func (is *Issuer) CSRF(token string) string {
	m := hmac.New(sha256.New, is.key)
	m.Write([]byte("xce csrf\x00"))
	m.Write([]byte(token))
	return hex.EncodeToString(m.Sum(nil))
}

// CheckCSRF reports whether csrf is the anti-forgery token of token
// (CSRF), compared in constant time.
func (is *Issuer) CheckCSRF(token, csrf string) bool {
	return hmac.Equal([]byte(is.CSRF(token)), []byte(csrf))
}
