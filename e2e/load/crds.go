package load

import (
	"fmt"
	"log/slog"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// installCRDs installs the CustomResourceDefinitions of path (a YAML file
// or a directory of them) and waits until the API server serves them; an
// empty path installs nothing. A peer such as Contour refuses to start
// without its own kinds.
func installCRDs(cfg *rest.Config, path string, log *slog.Logger) error {
	if path == "" {
		return nil
	}
	crds, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{path}, ErrorIfPathMissing: true})
	if err != nil {
		return fmt.Errorf("installing the CustomResourceDefinitions of %s: %w", path, err)
	}
	log.Info("installed CustomResourceDefinitions", "path", path, "count", len(crds))
	return nil
}
