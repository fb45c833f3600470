package main

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/xds"
	"github.com/ingress-xds/ingress-xds/xds/certs"
)

// serve refuses to start without TLS files unless told --insecure, which
// it then says loudly; with the files, it demands client certificates.
func TestServeTLSFlags(t *testing.T) {
	dir := t.TempDir()
	b, err := certs.Generate(certs.Options{ServerHosts: []string{"127.0.0.1"}, Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := certs.WriteFiles(dir, b, false); err != nil {
		t.Fatal(err)
	}
	files := xds.TLSFiles{
		Cert: filepath.Join(dir, "server", "tls.crt"),
		Key:  filepath.Join(dir, "server", "tls.key"),
		CA:   filepath.Join(dir, "server", "ca.crt"),
	}
	for _, c := range []struct {
		name    string
		flags   serveTLSFlags
		wantErr string // "" for success
		wantTLS bool
	}{
		{"nothing", serveTLSFlags{}, "--insecure", false},
		{"insecure", serveTLSFlags{insecure: true}, "", false},
		{"insecure and a file", serveTLSFlags{insecure: true, files: xds.TLSFiles{CA: files.CA}}, "exclude", false},
		{"no CA", serveTLSFlags{files: xds.TLSFiles{Cert: files.Cert, Key: files.Key}}, "--xds-tls-ca", false},
		{"files", serveTLSFlags{files: files}, "", true},
		{"missing file", serveTLSFlags{files: xds.TLSFiles{Cert: files.Cert, Key: files.Key, CA: files.CA + ".nope"}}, "ca.crt.nope", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			cfg, err := c.flags.config(slog.New(slog.NewTextHandler(&logs, nil)))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (cfg != nil) != c.wantTLS {
				t.Fatalf("TLS configuration %v, want one: %v", cfg, c.wantTLS)
			}
			if c.flags.insecure && !strings.Contains(logs.String(), "WITHOUT TLS") {
				t.Errorf("--insecure without a warning: %q", logs.String())
			}
			if cfg != nil && cfg.GetConfigForClient == nil {
				t.Error("the TLS configuration does not reload its files")
			}
		})
	}
}

func TestBootstrapTLSFlags(t *testing.T) {
	var o xds.BootstrapOptions
	if err := (&bootstrapTLSFlags{}).apply(&o); err != nil || o.TLS != nil {
		t.Errorf("no flags: %v, TLS %v; want plaintext", err, o.TLS)
	}
	for _, f := range []bootstrapTLSFlags{
		{files: xds.TLSFiles{Cert: "c", Key: "k"}},
		{serverName: "x"},
	} {
		if err := f.apply(&xds.BootstrapOptions{}); err == nil {
			t.Errorf("%+v accepted", f)
		}
	}
	f := bootstrapTLSFlags{files: xds.TLSFiles{Cert: "c", Key: "k", CA: "a"}, serverName: "xds.example"}
	if err := f.apply(&o); err != nil || o.TLS == nil || *o.TLS != f.files || o.ServerName != "xds.example" {
		t.Errorf("all flags: %v, %+v", err, o)
	}
}
