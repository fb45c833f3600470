package ingress

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Client certificates (the auth-tls keys). ingress-nginx applies them per
// server: the first Ingress of a host (oldest first here) with auth-tls
// settings sets them for the whole host. So an Ingress's fragment works out
// its policy (reading the Secret, which makes the fragment depend on it),
// and the host's merge takes the oldest. An Ingress whose Secret cannot be
// used is refused (refuse.go: its paths answer 503, never served without
// the check), where ingress-nginx makes the whole server answer 403: the
// other Ingresses of the host are served as they would be without it.

// clientCertIntent is what an Ingress asks of its hosts' clients.
type clientCertIntent struct {
	policy *ir.ClientCert // the host's, when the Ingress is its oldest
}

// parseClientCert reads the auth-tls keys: the client certificate policy
// the Ingress asks of its hosts (nil: none). Without auth-tls-secret the
// others do nothing, as in ingress-nginx.
func parseClientCert(values *annotations.Values, env groupEnv) (*clientCertIntent, []problem) {
	raw, ok := annotations.AuthTLSSecret.Get(values)
	key := annotations.AuthTLSSecret.Name()
	if !ok {
		// A value that does not parse is reported, and refuses the
		// Ingress, by the registry (an access control).
		if others := setAuthTLSKeys(values); len(others) > 0 && !annotations.AuthTLSSecret.Invalid(values) {
			return nil, []problem{problemf("InvalidAnnotation", "annotations %s do nothing without %s: ignored", strings.Join(others, ", "), key)}
		}
		return nil, nil
	}
	ns, name, _ := strings.Cut(raw, "/")
	if ns != env.ing.Namespace {
		// ingress-nginx's allow-cross-namespace-resources is off by
		// default: it denies, and its server answers 403.
		return nil, []problem{refusal(key, "%q is a Secret of another namespace than the Ingress's", raw)}
	}
	ca, err := clientCA(env.objects, types.NamespacedName{Namespace: ns, Name: name})
	if err != nil {
		return nil, []problem{refusal(key, "%q: %v", raw, err)}
	}
	p := &ir.ClientCert{CA: ca, Verify: ir.VerifyOn, Depth: 1}
	if v, ok := annotations.AuthTLSVerifyClient.Get(values); ok {
		p.Verify = ir.ClientVerify(v)
	}
	if d, ok := annotations.AuthTLSVerifyDepth.Get(values); ok {
		p.Depth = uint32(d)
	}
	p.ErrorPage, _ = annotations.AuthTLSErrorPage.Get(values)
	p.PassCertificate, _ = annotations.AuthTLSPassCertificate.Get(values)
	// One that does not parse has refused the Ingress (the registry).
	p.MatchSubject, _ = annotations.AuthTLSMatchCN.Get(values)
	return &clientCertIntent{policy: p}, nil
}

// clientCA reads a Secret's ca.crt.
func clientCA(objects objectReads, name types.NamespacedName) (ir.PEM, error) {
	s := objects.secret(name)
	if s == nil {
		return nil, errors.New("secret not found")
	}
	ca := s.Data["ca.crt"]
	if err := ir.CheckCABundle(ca); err != nil {
		return nil, fmt.Errorf("ca.crt: %w", err)
	}
	return ca, nil
}

// setAuthTLSKeys lists the auth-tls keys besides the Secret that are set.
func setAuthTLSKeys(values *annotations.Values) []string {
	var out []string
	add := func(set bool, name string) {
		if set {
			out = append(out, name)
		}
	}
	_, v := annotations.AuthTLSVerifyClient.Get(values)
	add(v, annotations.AuthTLSVerifyClient.Name())
	_, d := annotations.AuthTLSVerifyDepth.Get(values)
	add(d, annotations.AuthTLSVerifyDepth.Name())
	_, e := annotations.AuthTLSErrorPage.Get(values)
	add(e, annotations.AuthTLSErrorPage.Name())
	_, p := annotations.AuthTLSPassCertificate.Get(values)
	add(p, annotations.AuthTLSPassCertificate.Name())
	_, m := annotations.AuthTLSMatchCN.Get(values)
	add(m, annotations.AuthTLSMatchCN.Name())
	return out
}

// mergeClientCert sets the host's client certificate policy: the oldest
// Ingress routing the host that asks for one sets it; a younger one
// asking otherwise is reported.
func (h *hostMerge) mergeClientCert(host string, frags []*fragment) {
	if h.vhost == nil {
		return
	}
	var set *fragment
	for _, f := range frags {
		if f.clientCert == nil || f.canary != nil || !routesHost(f, host) {
			continue
		}
		if set == nil {
			set = f
			h.vhost.ClientCert = f.clientCert.policy
			continue
		}
		if !sameClientCert(set.clientCert.policy, f.clientCert.policy) {
			h.problems = append(h.problems, newProblem(f.ingress, "AuthTLSConflict",
				"host %q already has the client certificate settings of the older Ingress %s/%s: this Ingress's are ignored for it (ingress-nginx sets them per host)",
				host, set.ingress.Namespace, set.ingress.Name))
		}
	}
}

func routesHost(f *fragment, host string) bool {
	for _, hr := range f.routes {
		if hr.host == host {
			return true
		}
	}
	return false
}

func sameClientCert(a, b *ir.ClientCert) bool {
	return string(a.CA) == string(b.CA) && a.Verify == b.Verify && a.Depth == b.Depth &&
		a.ErrorPage == b.ErrorPage && a.MatchSubject == b.MatchSubject && a.PassCertificate == b.PassCertificate
}
