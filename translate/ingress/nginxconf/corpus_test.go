package nginxconf

import (
	// Registers -update, which make golden passes to every package of
	// translate/ingress.
	_ "github.com/ingress-xds/ingress-xds/internal/golden"

	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// corpusPath is shared/snippets/corpus.jsonl beside the repository (CI
// puts a copy of shared/ beside the clone): ../shared from the root.
func corpusPath(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "snippets", "corpus.jsonl")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("no go.mod above the test's directory")
		}
		dir = parent
	}
}

type corpusEntry struct {
	Key     string `json:"key"`
	Snippet string `json:"snippet"`
	Source  string `json:"source"`
	Seen    int    `json:"seen"`
}

func readCorpus(t testing.TB) []corpusEntry {
	t.Helper()
	f, err := os.Open(corpusPath(t))
	if os.IsNotExist(err) {
		t.Skip("no ../shared/snippets/corpus.jsonl beside the repository")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e corpusEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("corpus line %d: %v", len(out)+1, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCorpus parses every snippet people wrote (shared/snippets) and
// prints the ones refused, for a human to check that nginx refuses them
// too; the README says some are broken.
func TestCorpus(t *testing.T) {
	entries := readCorpus(t)
	parsed := 0
	for i, e := range entries {
		if _, err := Parse(e.Snippet); err != nil {
			t.Logf("corpus line %d (%s): %v\n%s", i+1, e.Key, err, e.Snippet)
			continue
		}
		parsed++
		roundTrip(t, e.Snippet)
	}
	t.Logf("%d of %d snippets parse", parsed, len(entries))
	if parsed*100 < len(entries)*97 {
		t.Errorf("only %d of %d snippets parse; want at least 97%%", parsed, len(entries))
	}
}
