package api

import (
	"crypto/tls"
	"fmt"
	"net"
)

// DefaultListen is the server's default TCP address for agents: the
// loopback interface only, where TLS is not required.
const DefaultListen = "127.0.0.1:7777"

// Loopback reports whether addr (host:port) listens on the loopback
// interface only: its host is "localhost" or a loopback IP address. An
// empty host (every interface), another name or another address is not.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ListenTCP listens on addr, with TLS when certFile and keyFile are given
// (a PEM certificate chain and its key). An address that is not loopback
// (Loopback) is refused without them: agent tokens must not cross a
// network in clear.
func ListenTCP(addr, certFile, keyFile string) (net.Listener, error) {
	if (certFile == "") != (keyFile == "") {
		return nil, fmt.Errorf("listen %s: give both --tls-cert and --tls-key, or neither", addr)
	}
	if certFile == "" && !Loopback(addr) {
		return nil, fmt.Errorf("listen %s: not a loopback address: TLS is required (--tls-cert and --tls-key)", addr)
	}
	var cfg *tls.Config
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("listen %s: %w", addr, err)
		}
		cfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	if cfg != nil {
		l = tls.NewListener(l, cfg)
	}
	return l, nil
}
