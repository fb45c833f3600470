// Package e2e holds the end-to-end tests: the real ingress-xds binary, a real
// Envoy, echo backends and, for cluster mode, a real kube-apiserver and etcd.
// They need the tools `make tools` installs and are skipped with -short.
package e2e

import (
	"os"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

func TestMain(m *testing.M) { os.Exit(framework.Main(m)) }
