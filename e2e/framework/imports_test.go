package framework

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

// TestFrameworkImportsNoProductPackage keeps this package importable from
// the tests of every package of the product: translate, xds and deploy
// tests take their certificates and polling from here, so if this package
// imported one of them, directly or through another package, those tests
// would stop compiling with an import cycle. Only e2e/ packages may be
// imported, and only those that obey the same rule.
func TestFrameworkImportsNoProductPackage(t *testing.T) {
	root := RepoRoot(t)
	seen := map[string]bool{}
	var visit func(importPath, via string)
	visit = func(importPath, via string) {
		if seen[importPath] {
			return
		}
		seen[importPath] = true
		rel, ok := strings.CutPrefix(importPath, modulePath+"/")
		if !ok {
			return // the standard library or another module
		}
		if !strings.HasPrefix(rel, "e2e/") {
			t.Errorf("e2e/framework imports %s (via %s): the tests of that package could no longer import e2e/framework", importPath, via)
			return
		}
		// Non-test files only, which is what an importer compiles.
		pkg, err := build.ImportDir(filepath.Join(root, filepath.FromSlash(rel)), 0)
		if err != nil {
			t.Fatalf("reading the imports of %s: %v", importPath, err)
		}
		for _, imp := range pkg.Imports {
			visit(imp, importPath)
		}
	}
	visit(modulePath+"/e2e/framework", "itself")
	if len(seen) < 2 {
		t.Fatalf("found %d packages: the walk read nothing", len(seen))
	}
}
