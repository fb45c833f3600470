package nginxconf

import (
	"testing"

	// Registers -update, which make golden passes to every package of
	// translate/ingress.
	_ "github.com/ingress-xds/ingress-xds/internal/golden"
	"github.com/ingress-xds/ingress-xds/internal/snippetcorpus"
)

// TestCorpus parses every snippet people wrote (shared/snippets) and
// prints the ones refused, for a human to check that nginx refuses them
// too; the README says some are broken.
func TestCorpus(t *testing.T) {
	entries := snippetcorpus.Read(t)
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
