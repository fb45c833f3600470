package certs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The subdirectories WriteFiles makes, one per end.
const (
	ServerDir = "server"
	ClientDir = "client"
)

// WriteFiles writes the bundle under dir as server/{tls.crt,tls.key,ca.crt}
// and client/{tls.crt,tls.key,ca.crt}: the layout of the Secrets mounted in
// a cluster. Private keys are readable by their owner only. Existing files
// are replaced only with overwrite. Each file is written whole and renamed
// into place, so that a server reloading them never reads half a file.
func WriteFiles(dir string, b *Bundle, overwrite bool) error {
	ends := []struct {
		sub  string
		pair KeyPair
	}{{ServerDir, b.Server}, {ClientDir, b.Client}}
	if !overwrite {
		for _, end := range ends {
			for _, name := range []string{CertFile, KeyFile, CAFile} {
				path := filepath.Join(dir, end.sub, name)
				if _, err := os.Stat(path); err == nil {
					return fmt.Errorf("%s exists; pass --overwrite to replace the certificates", path)
				} else if !errors.Is(err, fs.ErrNotExist) {
					return err
				}
			}
		}
	}
	for _, end := range ends {
		sub := filepath.Join(dir, end.sub)
		if err := os.MkdirAll(sub, 0o700); err != nil {
			return fmt.Errorf("creating %s: %w", sub, err)
		}
		// The key first: a server that reloads between two renames sees a
		// key that does not match its certificate, refuses the pair and
		// keeps the one it has, rather than a certificate it cannot use.
		for _, f := range []struct {
			name string
			data []byte
			mode os.FileMode
		}{{KeyFile, end.pair.Key, 0o600}, {CertFile, end.pair.Cert, 0o644}, {CAFile, end.pair.CA, 0o644}} {
			if err := writeAtomic(filepath.Join(sub, f.name), f.data, f.mode); err != nil {
				return err
			}
		}
	}
	return nil
}

func writeAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename, there is nothing to remove
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
