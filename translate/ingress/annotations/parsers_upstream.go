package annotations

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// The value formats of the upstream keys (keys_upstream.go).

// parseBackendProtocol reads backend-protocol in any case, spaces around
// ignored (ingress-nginx's ValidateOptions, case-insensitive), as upper case.
func parseBackendProtocol(s string) (string, error) {
	v := strings.ToUpper(strings.TrimSpace(s))
	switch v {
	case "HTTP", "HTTPS", "GRPC", "GRPCS", "H2C", "AUTO_HTTP", "FCGI":
		return v, nil
	}
	return "", fmt.Errorf("not one of HTTP, HTTPS, GRPC, GRPCS, H2C, AUTO_HTTP, FCGI")
}

// parseNamespacedName reads "namespace/name", each a DNS subdomain, as
// ingress-nginx's k8s.ParseNameNS takes a Secret's name.
func parseNamespacedName(s string) (string, error) {
	ns, name, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return "", fmt.Errorf(`not a Secret's "namespace/name"`)
	}
	return ns + "/" + name, nil
}

// parseServerName reads a DNS name, lower-cased, spaces around ignored. A
// port is not part of one: Host and SNI carry a name.
func parseServerName(s string) (string, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	if len(validation.IsDNS1123Subdomain(name)) > 0 {
		return "", fmt.Errorf("not a DNS name")
	}
	return name, nil
}

// parseTLSProtocols reads TLSv1.2 and TLSv1.3, space-separated, as a
// sorted list without repeats. ingress-nginx's validator takes nothing
// else (its older versions are gone from its regex).
func parseTLSProtocols(s string) ([]string, error) {
	var out []string
	for _, w := range strings.Fields(s) {
		if w != "TLSv1.2" && w != "TLSv1.3" {
			return nil, fmt.Errorf("%q is not TLSv1.2 or TLSv1.3", w)
		}
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no protocol")
	}
	slices.Sort(out)
	return out, nil
}

// boringCiphers are the TLS 1.2 cipher suites Envoy's BoringSSL takes by
// name (Envoy's cipher_suites documentation): a name outside it would make
// Envoy refuse the cluster.
var boringCiphers = []string{
	"ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256",
	"ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384",
	"ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
	"ECDHE-ECDSA-AES128-SHA", "ECDHE-RSA-AES128-SHA",
	"ECDHE-ECDSA-AES256-SHA", "ECDHE-RSA-AES256-SHA",
	"AES128-GCM-SHA256", "AES256-GCM-SHA384", "AES128-SHA", "AES256-SHA",
}

// parseCiphers reads an OpenSSL cipher list of plain names; "DEFAULT" is
// no list (Envoy's own). Aliases and exclusions have no Envoy form.
func parseCiphers(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "DEFAULT" {
		return []string(nil), nil
	}
	var out []string
	for _, name := range strings.Split(s, ":") {
		if !slices.Contains(boringCiphers, name) {
			return nil, fmt.Errorf("%q is not a TLS 1.2 cipher suite Envoy takes by name (%s)", name, strings.Join(boringCiphers, ", "))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// parseLoadBalance reads load-balance exactly, spaces around ignored
// (ingress-nginx's validator is case-sensitive here), as its algorithm.
func parseLoadBalance(s string) (string, error) {
	v := strings.TrimSpace(s)
	switch v {
	case "round_robin", "ewma", "chash", "chashsubset", "sticky_balanced", "sticky_persistent":
		return v, nil
	}
	return "", fmt.Errorf("not one of round_robin, ewma, chash, chashsubset, sticky_balanced, sticky_persistent")
}

// HashPart is one part of a request that upstream-hash-by hashes.
type HashPart struct {
	// Kind is HashPath, HashHost, HashSourceIP, HashHeader, HashCookie or
	// HashQuery.
	Kind string
	// Name is the header's (lower case), cookie's or query parameter's.
	Name string
}

// The kinds of HashPart.
const (
	HashPath     = "path"
	HashHost     = "host"
	HashSourceIP = "source-ip"
	HashHeader   = "header"
	HashCookie   = "cookie"
	HashQuery    = "query"
)

// nginxVariable is one variable, $name or ${name}.
var nginxVariable = regexp.MustCompile(`^\$(?:\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))`)

// parseHashBy reads upstream-hash-by: nginx variables only, each once, in
// their order.
func parseHashBy(s string) ([]HashPart, error) {
	rest := strings.TrimSpace(s)
	if rest == "" {
		return nil, fmt.Errorf("no variable")
	}
	var out []HashPart
	for rest != "" {
		m := nginxVariable.FindStringSubmatch(rest)
		if m == nil {
			return nil, fmt.Errorf("%q is not an nginx variable: only variables are hashed", rest)
		}
		rest = rest[len(m[0]):]
		name := m[1] + m[2]
		part, err := hashPart(name)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, part) {
			out = append(out, part)
		}
	}
	return out, nil
}

func hashPart(variable string) (HashPart, error) {
	switch variable {
	case "request_uri", "uri", "document_uri":
		return HashPart{Kind: HashPath}, nil
	case "host", "http_host":
		return HashPart{Kind: HashHost}, nil
	case "remote_addr", "binary_remote_addr":
		return HashPart{Kind: HashSourceIP}, nil
	}
	for _, p := range []struct{ prefix, kind string }{{"http_", HashHeader}, {"cookie_", HashCookie}, {"arg_", HashQuery}} {
		if name, ok := strings.CutPrefix(variable, p.prefix); ok && name != "" {
			if p.kind == HashHeader {
				// nginx's $http_x_foo is the header X-Foo.
				name = strings.ToLower(strings.ReplaceAll(name, "_", "-"))
			}
			return HashPart{Kind: p.kind, Name: name}, nil
		}
	}
	return HashPart{}, fmt.Errorf("$%s is not a variable Envoy can hash ($request_uri, $uri, $host, $remote_addr, $http_NAME, $cookie_NAME, $arg_NAME)", variable)
}
