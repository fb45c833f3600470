package translate_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
	"github.com/ingress-xds/ingress-xds/xds"
)

var update = flag.Bool("update", false, "rewrite the golden files from the current output")

// goldenOptions are the options every golden case is translated with.
var goldenOptions = translate.Options{HTTPPort: 8080, HTTPSPort: 8443}

// goldenCases lists testdata/*.yaml: each is one case, its expected output
// beside it as .json (the output of `ingress-xds translate -f`).
func goldenCases(t *testing.T) []string {
	t.Helper()
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatal("no golden cases in testdata/")
	}
	return inputs
}

// translateFile runs a case as `ingress-xds translate -f` does.
func translateFile(t *testing.T, input string) *translate.Result {
	t.Helper()
	st, err := kube.LoadState(input, kube.ClassFilter{WatchClassless: true})
	if err != nil {
		t.Fatalf("loading %s: %v", input, err)
	}
	res, err := translate.Translate(st, goldenOptions)
	if err != nil {
		t.Fatalf("translating %s: %v", input, err)
	}
	return res
}

func TestGolden(t *testing.T) {
	for _, input := range goldenCases(t) {
		name := strings.TrimSuffix(filepath.Base(input), ".yaml")
		t.Run(name, func(t *testing.T) {
			res := translateFile(t, input)
			got, err := translate.RenderJSON(res)
			if err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(input, ".yaml") + ".json"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("reading golden file (regenerate with go test ./translate -run TestGolden -update): %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from %s (regenerate with -update and review the diff):\n%s", golden, lineDiff(string(want), string(got)))
			}
			// Every golden output must be publishable as it is.
			if err := xds.Validate(res.Resources); err != nil {
				t.Errorf("resources fail validation: %v", err)
			}
			if _, err := xds.NewSnapshot(res.Resources); err != nil {
				t.Errorf("resources do not make a consistent snapshot: %v", err)
			}
		})
	}
}

// lineDiff shows the first differing lines, enough to see what changed.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out strings.Builder
	shown := 0
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			out.WriteString("line " + strconv.Itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl + "\n")
			if shown++; shown == 10 {
				break
			}
		}
	}
	return out.String()
}
