package xds

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/ingress-xds/ingress-xds/xds/certs"
)

// syncBuffer is a log destination safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newBundle(t *testing.T) *certs.Bundle {
	t.Helper()
	b, err := certs.Generate(certs.Options{ServerHosts: []string{"127.0.0.1"}, Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// serveTLS runs a Server over mutual TLS from the files under dir.
func serveTLS(t *testing.T, dir string, logs *syncBuffer) string {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(logs, nil))
	files := TLSFiles{
		Cert: filepath.Join(dir, certs.ServerDir, certs.CertFile),
		Key:  filepath.Join(dir, certs.ServerDir, certs.KeyFile),
		CA:   filepath.Join(dir, certs.ServerDir, certs.CAFile),
	}
	cfg, err := ServerTLS(files, logger)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- NewServerWithOptions(logger, Options{TLS: cfg}).ServeListener(ctx, lis) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serving: %v", err)
		}
	})
	return lis.Addr().String()
}

// call makes one gRPC health check with creds and returns its error: nil
// when the server accepted the connection.
func call(t *testing.T, address string, creds credentials.TransportCredentials) error {
	t.Helper()
	conn, err := grpc.NewClient(address, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	return err
}

// clientCreds presents pair's certificate (none when pair.Cert is nil) and
// trusts pair.CA; it records the certificate the server presented.
func clientCreds(t *testing.T, pair certs.KeyPair, served *[]byte) credentials.TransportCredentials {
	t.Helper()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pair.CA) {
		t.Fatal("no CA")
	}
	cfg := &tls.Config{ServerName: "127.0.0.1", RootCAs: roots, MinVersion: tls.VersionTLS12}
	if pair.Cert != nil {
		c, err := tls.X509KeyPair(pair.Cert, pair.Key)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	if served != nil {
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			*served = cs.PeerCertificates[0].Raw
			return nil
		}
	}
	return credentials.NewTLS(cfg)
}

func certDER(t *testing.T, pemBytes []byte) []byte {
	t.Helper()
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		t.Fatal("no PEM certificate")
	}
	return block.Bytes
}

// The server demands a client certificate of its CA: plaintext clients,
// clients without a certificate and clients of another CA are refused.
// When the files change, the next connection gets the new certificate and
// is judged by the new CA, without a restart; a broken set of files is
// refused, logged once, and the previous certificates serve on.
func TestServerTLSRequiresClientCertificatesAndReloads(t *testing.T) {
	dir := t.TempDir()
	first := newBundle(t)
	if err := certs.WriteFiles(dir, first, false); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	address := serveTLS(t, dir, logs)

	var served []byte
	if err := call(t, address, clientCreds(t, first.Client, &served)); err != nil {
		t.Fatalf("client with a certificate of the server's CA: %v", err)
	}
	if !bytes.Equal(served, certDER(t, first.Server.Cert)) {
		t.Error("the server did not present the certificate of its files")
	}
	other := newBundle(t)
	refusals := map[string]credentials.TransportCredentials{
		"plaintext":                  insecure.NewCredentials(),
		"no client certificate":      clientCreds(t, certs.KeyPair{CA: first.CA}, nil),
		"another CA's client":        clientCreds(t, certs.KeyPair{Cert: other.Client.Cert, Key: other.Client.Key, CA: first.CA}, nil),
		"server certificate as user": clientCreds(t, certs.KeyPair{Cert: first.Server.Cert, Key: first.Server.Key, CA: first.CA}, nil),
	}
	for name, creds := range refusals {
		if err := call(t, address, creds); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}

	// Rotation: a new CA and new certificates, written over the old.
	second := newBundle(t)
	if err := certs.WriteFiles(dir, second, true); err != nil {
		t.Fatal(err)
	}
	if err := call(t, address, clientCreds(t, second.Client, &served)); err != nil {
		t.Fatalf("client of the new CA after the rotation: %v", err)
	}
	if !bytes.Equal(served, certDER(t, second.Server.Cert)) {
		t.Error("after the rotation, the server still presents the old certificate")
	}
	if err := call(t, address, clientCreds(t, first.Client, nil)); err == nil {
		t.Error("after the rotation, a client certificate of the old CA is still accepted")
	}
	if n := strings.Count(logs.String(), "xDS TLS certificates reloaded"); n != 1 {
		t.Errorf("%d reloads logged, want 1:\n%s", n, logs)
	}

	// A key that does not match the certificate: refused, logged once,
	// the second bundle serves on.
	keyPath := filepath.Join(dir, certs.ServerDir, certs.KeyFile)
	if err := os.WriteFile(keyPath, other.Server.Key, 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := call(t, address, clientCreds(t, second.Client, &served)); err != nil {
			t.Fatalf("with broken files, the previous certificates must serve on: %v", err)
		}
	}
	if !bytes.Equal(served, certDER(t, second.Server.Cert)) {
		t.Error("with broken files, the server changed its certificate")
	}
	if n := strings.Count(logs.String(), "cannot reload the xDS TLS certificates"); n != 1 {
		t.Errorf("%d warnings about the broken files, want 1:\n%s", n, logs)
	}
	for _, key := range [][]byte{first.Server.Key, second.Server.Key, other.Server.Key} {
		if strings.Contains(logs.String(), strings.Split(string(key), "\n")[1]) {
			t.Error("a private key appears in the log")
		}
	}
}
