package audit

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/internal/snippetcorpus"
	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress"
)

// corpusFloor is the number of snippets of ../shared/snippets/corpus.jsonl
// served, as recorded in docs/snippets.md and docs/annotations.md: the
// test fails below it, so that no change serves fewer real snippets
// unnoticed.
const corpusFloor = 158

// TestSnippetCorpus audits each snippet of the corpus of real-world
// ingress-nginx snippets (../shared/snippets/corpus.jsonl, beside the
// repository) on an Ingress of its own, the ConfigMap's keys on a
// ConfigMap of their own, and reports the share served and, for the
// rest, what refuses them. Snippets are allowed as ingress-nginx allows
// them (annotations-risk-level Critical, allow-snippet-annotations).
func TestSnippetCorpus(t *testing.T) {
	entries := snippetcorpus.Read(t)
	cm := types.NamespacedName{Namespace: "ingress-nginx", Name: "controller"}
	opts := ingress.Options{HTTPPort: 8080, HTTPSPort: 8443, ConfigMap: cm}
	allow := map[string]string{"allow-snippet-annotations": "true", "annotations-risk-level": "Critical"}
	served, invalid := 0, 0
	why := map[string]int{}
	for i, e := range entries {
		ing := map[string]any{
			"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
			"metadata": map[string]any{"name": fmt.Sprintf("s%d", i), "namespace": "default"},
			"spec": map[string]any{"rules": []any{map[string]any{"host": fmt.Sprintf("s%d.example", i), "http": map[string]any{"paths": []any{
				map[string]any{"path": "/", "pathType": "Prefix", "backend": map[string]any{"service": map[string]any{"name": "echo", "port": map[string]any{"number": 80}}}},
			}}}}},
		}
		data := map[string]string{}
		for k, v := range allow {
			data[k] = v
		}
		if key, ok := strings.CutPrefix(e.Key, "cm:"); ok {
			data[key] = e.Snippet
		} else if e.Key == "http-snippet" || e.Key == "location-snippet" {
			data[e.Key] = e.Snippet
		} else {
			ing["metadata"].(map[string]any)["annotations"] = map[string]string{"nginx.ingress.kubernetes.io/" + e.Key: e.Snippet}
		}
		configMap := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": cm.Name, "namespace": cm.Namespace}, "data": data}
		service := `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "echo", "namespace": "default"}, "spec": {"ports": [{"name": "http", "port": 80}]}}`
		var docs []string
		for _, o := range []any{ing, configMap} {
			b, err := json.Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, string(b))
		}
		st, err := kube.ManifestState(strings.NewReader(service+"\n---\n"+strings.Join(docs, "\n---\n")), "corpus", nginxClassless, ingress.WithConfigMap(ingress.References, cm))
		if err != nil {
			t.Fatalf("entry %d: %v", i+1, err)
		}
		r := Run(st, opts)
		if len(r.Ingresses) != 1 {
			t.Fatalf("entry %d: audited %d Ingresses", i+1, len(r.Ingresses))
		}
		if a := r.Ingresses[0]; a.Served {
			served++
		} else {
			why[refusedBy(a)]++
			if nginxRefuses(a) {
				invalid++
			}
		}
	}
	share := float64(served) / float64(len(entries))
	t.Logf("served %d of %d snippets (%.0f%%); %d of the %d nginx itself accepts (%.0f%%), %d being refused by nginx too (syntax, an unknown zone or variable, a directive where nginx takes none); refused by:",
		served, len(entries), 100*share, served, len(entries)-invalid, 100*float64(served)/float64(len(entries)-invalid), invalid)
	reasons := make([]string, 0, len(why))
	for k := range why {
		reasons = append(reasons, k)
	}
	sort.Slice(reasons, func(i, j int) bool {
		return why[reasons[i]] > why[reasons[j]] || why[reasons[i]] == why[reasons[j]] && reasons[i] < reasons[j]
	})
	for _, k := range reasons {
		t.Logf("  %3d %s", why[k], k)
	}
	if served < corpusFloor {
		t.Errorf("%d snippets of the corpus served (%.1f%%), below the %d docs/snippets.md records", served, 100*share, corpusFloor)
	}
}

// nginxRefuses says whether what refuses a's snippet is something nginx
// itself refuses: the refusal says so, or the text is not nginx syntax.
func nginxRefuses(a Ingress) bool {
	return len(a.Refusals) > 0 && (strings.Contains(a.Refusals[0], "nginx refuses") || strings.Contains(a.Refusals[0], "not nginx syntax"))
}

// nginxClassless audits Ingresses without a class.
var nginxClassless = kube.ClassFilter{WatchClassless: true}

// refusedBy is what refuses an Ingress, short: the directive and why, or
// the key.
func refusedBy(a Ingress) string {
	if len(a.Refusals) == 0 {
		return "(no refusal given)"
	}
	s := a.Refusals[0]
	if i := strings.Index(s, "directive "); i >= 0 {
		s = s[i+len("directive "):]
		for _, end := range []string{" (nothing of the snippet", ", and a snippet is applied whole"} {
			if j := strings.Index(s, end); j >= 0 {
				s = s[:j]
			}
		}
		// The line number differs from snippet to snippet.
		if k := strings.Index(s, " (line "); k >= 0 {
			if end := strings.Index(s[k:], ")"); end >= 0 {
				s = s[:k] + s[k+end+1:]
			}
		}
		return s
	}
	if i := strings.Index(s, ": the Ingress is not served"); i >= 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}
