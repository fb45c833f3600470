// Package snippetcorpus reads, for tests, the corpus of real-world
// ingress-nginx snippets: ../shared/snippets/corpus.jsonl beside the
// repository (CI puts a copy of shared/ beside the clone). Its README
// says what each line holds.
package snippetcorpus

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Entry is one snippet as people wrote it.
type Entry struct {
	// Key is the annotation (configuration-snippet, server-snippet,
	// auth-snippet) or the ConfigMap's key (cm:server-snippet,
	// location-snippet, http-snippet).
	Key     string `json:"key"`
	Snippet string `json:"snippet"`
	Source  string `json:"source"`
	Seen    int    `json:"seen"`
}

// Read reads the corpus, or skips the test when it is not beside the
// repository.
func Read(t testing.TB) []Entry {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("no go.mod above the test's directory")
		}
		dir = parent
	}
	f, err := os.Open(filepath.Join(dir, "..", "shared", "snippets", "corpus.jsonl"))
	if os.IsNotExist(err) {
		t.Skip("no ../shared/snippets/corpus.jsonl beside the repository")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Entry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e Entry
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
