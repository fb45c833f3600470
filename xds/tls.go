package xds

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// TLSFiles name the PEM files of the xDS server's mutual TLS: its own
// certificate chain and key, and the CA certificates that client
// certificates must chain to.
type TLSFiles struct {
	Cert, Key, CA string
}

// ServerTLS returns the TLS configuration of the xDS server: TLS 1.2 or
// later, and a client certificate issued by files.CA on every connection,
// refused otherwise. The files are read now, and an error returned if they
// do not make a usable configuration; after that they are read again
// whenever one of them changes (checked at each new connection, which is
// rare: one per Envoy, plus reconnections), so that rotated certificates
// take effect without a restart. A set of files that does not load (a
// rotation half done, a key that does not match) is logged and the
// previous configuration kept until the files are fixed.
func ServerTLS(files TLSFiles, logger *slog.Logger) (*tls.Config, error) {
	r := &reloadingTLS{files: files, log: logger}
	if err := r.reload(); err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		GetConfigForClient: r.configForClient,
	}, nil
}

// reloadingTLS holds the configuration loaded from files, and the stamps of
// the files it was loaded from.
type reloadingTLS struct {
	files TLSFiles
	log   *slog.Logger

	mu     sync.Mutex
	config *tls.Config
	loaded [3]fileStamp // of the files config came from
	failed [3]fileStamp // of the last set that failed to load, logged once
}

// fileStamp identifies a version of a file without reading it. A
// Kubernetes Secret volume replaces its files through a symlink swap, which
// os.Stat follows to the new file.
type fileStamp struct {
	modTime time.Time
	size    int64
}

func (r *reloadingTLS) configForClient(*tls.ClientHelloInfo) (*tls.Config, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	stamps, err := r.stamps()
	if err != nil {
		// The files are gone (mid-rotation, or removed): the certificate
		// in memory still serves.
		r.logFailure(stamps, err)
		return r.config, nil
	}
	if stamps == r.loaded {
		return r.config, nil
	}
	if err := r.reloadLocked(stamps); err != nil {
		r.logFailure(stamps, err)
	}
	return r.config, nil
}

func (r *reloadingTLS) reload() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	stamps, err := r.stamps()
	if err != nil {
		return fmt.Errorf("xDS TLS files: %w", err)
	}
	return r.reloadLocked(stamps)
}

func (r *reloadingTLS) reloadLocked(stamps [3]fileStamp) error {
	cfg, leaf, err := loadServerTLS(r.files)
	if err != nil {
		return err
	}
	first := r.config == nil
	r.config, r.loaded = cfg, stamps
	msg := "xDS TLS certificates reloaded"
	if first {
		msg = "xDS TLS certificates loaded"
	}
	r.log.Info(msg, "cert", r.files.Cert, "subject", leaf.Subject.String(),
		"notAfter", leaf.NotAfter.UTC().Format(time.RFC3339), "clientCA", r.files.CA)
	return nil
}

func (r *reloadingTLS) logFailure(stamps [3]fileStamp, err error) {
	if stamps == r.failed {
		return
	}
	r.failed = stamps
	r.log.Warn("cannot reload the xDS TLS certificates; keeping the previous ones", "err", err)
}

func (r *reloadingTLS) stamps() ([3]fileStamp, error) {
	var out [3]fileStamp
	for i, path := range []string{r.files.Cert, r.files.Key, r.files.CA} {
		info, err := os.Stat(path)
		if err != nil {
			return out, err
		}
		out[i] = fileStamp{modTime: info.ModTime(), size: info.Size()}
	}
	return out, nil
}

// loadServerTLS reads the three files into a configuration. Its errors name
// files, never their content: key material must not reach the logs.
func loadServerTLS(files TLSFiles) (*tls.Config, *x509.Certificate, error) {
	pair, err := tls.LoadX509KeyPair(files.Cert, files.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("loading the xDS server certificate %s and key %s: %w", files.Cert, files.Key, err)
	}
	leaf := pair.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, nil, fmt.Errorf("parsing %s: %w", files.Cert, err)
		}
	}
	caPEM, err := os.ReadFile(files.CA)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the client CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, nil, errors.New("no PEM certificate in the client CA file " + files.CA)
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{pair},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
	}, leaf, nil
}
