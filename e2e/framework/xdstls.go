package framework

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// TLSFiles are the PEM files of one end of xDS over mutual TLS: its
// certificate and key, and the CA it trusts for the other end.
type TLSFiles struct {
	Cert, Key, CA string
}

// XDSCerts are the files `ingress-xds certgen --out DIR` wrote.
type XDSCerts struct {
	Dir    string
	Hosts  string // the server certificate's names and addresses, comma-separated
	Server TLSFiles
	Client TLSFiles
}

// CertGen runs the real `ingress-xds certgen` into a new directory, for a
// server certificate valid for hosts (127.0.0.1 and localhost when none).
func CertGen(t testing.TB, hosts ...string) *XDSCerts {
	t.Helper()
	if len(hosts) == 0 {
		hosts = []string{"127.0.0.1", "localhost"}
	}
	dir := t.TempDir()
	c := &XDSCerts{
		Dir:    dir,
		Hosts:  strings.Join(hosts, ","),
		Server: tlsFilesIn(filepath.Join(dir, "server")),
		Client: tlsFilesIn(filepath.Join(dir, "client")),
	}
	c.run(t)
	return c
}

// Regenerate runs certgen --overwrite into the same directory: a new CA and
// new certificates in place of the old, as a rotation does.
func (c *XDSCerts) Regenerate(t testing.TB) {
	t.Helper()
	c.run(t, "--overwrite")
}

func (c *XDSCerts) run(t testing.TB, extra ...string) {
	t.Helper()
	args := append([]string{"certgen", "--out", c.Dir, "--hosts", c.Hosts}, extra...)
	if out, err := exec.Command(IngressXDS(t), args...).CombinedOutput(); err != nil {
		t.Fatalf("ingress-xds %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func tlsFilesIn(dir string) TLSFiles {
	return TLSFiles{Cert: filepath.Join(dir, "tls.crt"), Key: filepath.Join(dir, "tls.key"), CA: filepath.Join(dir, "ca.crt")}
}

// ClientConfig returns a Go TLS configuration that presents these files'
// certificate and trusts only their CA, for a server called serverName.
func (f TLSFiles) ClientConfig(serverName string) (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(f.CA)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("no certificate in " + f.CA)
	}
	return &tls.Config{
		ServerName:   serverName,
		Certificates: []tls.Certificate{pair},
		RootCAs:      pool,
		MinVersion:   tls.VersionTLS12,
	}, nil
}

// DialXDS opens a gRPC connection to the control plane's xDS port, over
// mutual TLS with the client certificate when it serves TLS. The
// connection is closed when the test ends.
func (cp *ControlPlane) DialXDS(t testing.TB) *grpc.ClientConn {
	t.Helper()
	creds := insecure.NewCredentials()
	if cp.TLS != nil {
		cfg, err := cp.TLS.Client.ClientConfig("127.0.0.1")
		if err != nil {
			t.Fatalf("client TLS configuration: %v", err)
		}
		creds = credentials.NewTLS(cfg)
	}
	return DialXDSWith(t, cp, creds)
}

// DialXDSWith is DialXDS with the transport credentials given.
func DialXDSWith(t testing.TB, cp *ControlPlane, creds credentials.TransportCredentials) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(cp.XDSAddress, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatalf("dialing xDS at %s: %v", cp.XDSAddress, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// Grpcurl runs the real grpcurl as `grpcurl FLAGS ADDRESS REST...` against
// the control plane's xDS port (REST: a method, or list or describe and a
// symbol), over mutual TLS with the client certificate when it serves TLS,
// and returns its combined output.
func (cp *ControlPlane) Grpcurl(t testing.TB, flags []string, rest ...string) (string, error) {
	t.Helper()
	transport := []string{"-plaintext"}
	if cp.TLS != nil {
		c := cp.TLS.Client
		transport = []string{"-cacert", c.CA, "-cert", c.Cert, "-key", c.Key}
	}
	return cp.GrpcurlAs(t, transport, flags, rest...)
}

// GrpcurlAs is Grpcurl with the transport flags given (-plaintext, -cacert,
// -cert, -key...), for clients the server is expected to refuse.
func (cp *ControlPlane) GrpcurlAs(t testing.TB, transport, flags []string, rest ...string) (string, error) {
	t.Helper()
	tools := FindTools(t)
	// Bounded, so that a server that never answers fails the call rather
	// than hangs the test.
	argv := append([]string{"-connect-timeout", "5", "-max-time", "30"}, transport...)
	argv = append(append(append(argv, flags...), cp.XDSAddress), rest...)
	out, err := exec.Command(filepath.Join(tools.Dir, "bin", "grpcurl"), argv...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("grpcurl %s: %w: %s", strings.Join(argv, " "), err, out)
	}
	return string(out), nil
}
