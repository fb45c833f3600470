package framework

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"time"
)

// clientTLS is how the HTTPS helpers talk to Envoy: the server name sent
// as SNI is also the name the certificate must be valid for, under roots,
// as a browser would check it.
func clientTLS(serverName string, roots *x509.CertPool) *tls.Config {
	return &tls.Config{ServerName: serverName, RootCAs: roots, MinVersion: tls.VersionTLS12}
}

// newTLSClient is newClient over HTTPS: a new connection for every request.
func newTLSClient(serverName string, roots *x509.CertPool) *http.Client {
	return &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{
			Proxy:             nil,
			DisableKeepAlives: true,
			TLSClientConfig:   clientTLS(serverName, roots),
		},
		CheckRedirect: noRedirects,
	}
}

// GetTLS sends GET path over HTTPS to address (host:port) on a new
// connection, with serverName as SNI, trusting only roots, and with the
// given Host header. The served certificate is in the response's
// Certificate. A handshake that fails, or a certificate not valid for
// serverName under roots, is an error.
func GetTLS(address, serverName string, roots *x509.CertPool, host, path string) (Response, error) {
	return get(newTLSClient(serverName, roots), "https", address, host, path)
}

// GetTLSUnverified is GetTLS accepting whatever certificate the server
// presents, to learn what the server does past a handshake that a real
// client would abandon.
func GetTLSUnverified(address, serverName, host, path string) (Response, error) {
	client := newTLSClient(serverName, nil)
	client.Transport.(*http.Transport).TLSClientConfig.InsecureSkipVerify = true
	return get(client, "https", address, host, path)
}

// ExpectTLS is Expect over HTTPS, as GetTLS sends it; it also checks that
// the served certificate is valid for serverName (GetTLS fails otherwise).
func ExpectTLS(address, serverName string, roots *x509.CertPool, host, path string, status int, backend string) error {
	return expect(newTLSClient(serverName, roots), "https", address, host, path, status, backend)
}

// NewTLSSession is NewSession over HTTPS: one kept-alive TLS connection to
// address, with serverName as SNI, trusting only roots.
func NewTLSSession(address, serverName string, roots *x509.CertPool) *Session {
	return newSession("https", address, clientTLS(serverName, roots))
}

// Handshake opens a TLS connection to address with serverName as SNI (none
// when empty) and returns the leaf certificate the server presented,
// without verifying it: it answers "what does the server send for this
// name", including when the answer is a certificate a client would refuse.
// The connection is closed before it returns.
func Handshake(address, serverName string) (*x509.Certificate, error) {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	conn, err := tls.DialWithDialer(dialer, "tcp", address, &tls.Config{
		ServerName:         serverName,
		InsecureSkipVerify: true, // the caller inspects the certificate itself
		MinVersion:         tls.VersionTLS12,
	})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	certs := conn.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return nil, errors.New("the server presented no certificate")
	}
	return certs[0], nil
}
