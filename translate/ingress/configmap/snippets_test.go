package configmap

import (
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
)

// The ConfigMap's server-snippet lands in every host's server: whether an
// error_page there has an effect depends on every host's paths, and
// refusing it on one host would refuse every Ingress of the host, so it
// is refused once, as any directive not translated there refuses every
// Ingress; the annotation's is translated (snippets_server.go).
func TestConfigMapServerSnippetErrorPage(t *testing.T) {
	s := New(annotations.New("")).Parse(map[string]string{"server-snippet": "error_page 404 /404.html;"})
	if s.Snippets.Server != nil {
		t.Errorf("server snippet %+v applied", s.Snippets.Server)
	}
	if len(s.Issues) != 1 || s.Issues[0].Key != "server-snippet" || !strings.Contains(s.Issues[0].Message, "directive error_page (line 1)") {
		t.Errorf("issues %+v: want server-snippet refused for its error_page", s.Issues)
	}
}

// The ConfigMap's own snippets' real_ip_header has no effect while the
// realip module is off, and refuses every Ingress where the ConfigMap
// turns it on (TestSnippetRealIPHeader has the annotation's).
func TestConfigMapSnippetRealIPHeader(t *testing.T) {
	tab := New(annotations.New(""))
	off := tab.Parse(map[string]string{"server-snippet": "real_ip_header CF-Connecting-IP;"})
	if off.Snippets.Server == nil || len(off.Issues) != 0 {
		t.Errorf("realip off: server snippet %v, issues %+v: want it applied", off.Snippets.Server, off.Issues)
	}
	on := tab.Parse(map[string]string{"server-snippet": "real_ip_header CF-Connecting-IP;", "enable-real-ip": "true"})
	if on.Snippets.Server != nil || len(on.Issues) != 1 || !strings.Contains(on.Issues[0].Message, "directive real_ip_header (line 1)") {
		t.Errorf("enable-real-ip: server snippet %v, issues %+v: want it refused", on.Snippets.Server, on.Issues)
	}
}
