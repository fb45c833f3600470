package ir

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"
)

// policyCase is a route policy that breaks the contract once, and the
// violation Validate must report for it, matched by errors.Is against its
// sentinel (wantViolations).
type policyCase struct {
	name   string
	policy *RoutePolicy
	want   violation
}

func runPolicyCases(t *testing.T, cases []policyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := valid()
			m.VirtualHosts[0].Routes[0].Policy = tc.policy
			wantViolations(t, m.Validate(), tc.want)
		})
	}
}

func TestValidateLimits(t *testing.T) {
	rate := func(r *RateLimit) *RoutePolicy {
		base := RateLimit{Rates: []RequestRate{{Requests: 10, Period: Duration(time.Second), Bucket: 10}}, Status: 503}
		if r.Rates != nil {
			base.Rates = r.Rates
		}
		if r.Exempt != nil {
			base.Exempt = r.Exempt
		}
		if r.Status != 0 {
			base.Status = r.Status
		}
		return &RoutePolicy{RateLimit: &base}
	}
	conns := func(c ConnectionLimit) *RoutePolicy {
		if c.Zone == "" {
			c.Zone = "default/a"
		}
		if c.Status == 0 {
			c.Status = 503
		}
		return &RoutePolicy{Connections: &c}
	}
	if err := func() error {
		m := valid()
		m.VirtualHosts[0].Routes[0].Policy = rate(&RateLimit{})
		return m.Validate()
	}(); err != nil {
		t.Fatalf("a valid rate limit: %v", err)
	}
	runPolicyCases(t, []policyCase{
		{"rate limit without a rate", &RoutePolicy{RateLimit: &RateLimit{Status: 503}},
			route("Policy.RateLimit.Rates", ErrNoOp, "rate limit: no rate")},
		{"rate of no requests", rate(&RateLimit{Rates: []RequestRate{{Period: Duration(time.Second), Bucket: 1}}}),
			route("Policy.RateLimit.Rates[0]", ErrOutOfRange, "neither may be 0")},
		{"rate over a period Envoy cannot count", rate(&RateLimit{Rates: []RequestRate{{Requests: 1, Period: Duration(70 * time.Millisecond), Bucket: 1}}}),
			route("Policy.RateLimit.Rates[0].Period", ErrOutOfRange, "period 70ms: not a multiple of 50ms")},
		{"rate limit exempting no CIDR", rate(&RateLimit{Exempt: []string{"10.0.0.0/8", "10.0.0.1/8"}}),
			route("Policy.RateLimit.Exempt[1]", ErrBadAddress, `rate limit: exempt: "10.0.0.1/8" is not a canonical CIDR`)},
		{"rate limit refusing with a success", rate(&RateLimit{Status: 200}),
			route("Policy.RateLimit.Status", ErrOutOfRange, "status 200 is not 400 to 599")},
		{"connection limit of 0", conns(ConnectionLimit{}),
			route("Policy.Connections.Max", ErrNoOp, "connection limit: max 0")},
		{"connection zone with a comma", conns(ConnectionLimit{Max: 1, Zone: "a,b"}),
			route("Policy.Connections.Zone", ErrBadName, `zone "a,b"`)},
		{"connection limit exempting no CIDR", conns(ConnectionLimit{Max: 1, Exempt: []string{"::1/64"}}),
			route("Policy.Connections.Exempt[0]", ErrBadAddress, `connection limit: exempt: "::1/64"`)},
		{"connection limit refusing with a redirect", conns(ConnectionLimit{Max: 1, Status: 302}),
			route("Policy.Connections.Status", ErrOutOfRange, "status 302 is not 400 to 599")},
		{"response rate of 0", &RoutePolicy{ResponseRate: &ResponseRate{AfterKiB: 1}},
			route("Policy.ResponseRate.KiBPerSecond", ErrNoOp, "response rate: 0 KiB/s")},
		{"compression level 0", &RoutePolicy{Compression: &Compression{ContentTypes: []string{"text/html"}}},
			route("Policy.Compression.Level", ErrOutOfRange, "compression: level 0")},
		{"compression skipping clients RE2 refuses", &RoutePolicy{Compression: &Compression{Level: 1, ContentTypes: []string{"text/html"}, SkipUserAgent: "(?<!x)bot"}},
			route("Policy.Compression.SkipUserAgent", ErrBadRegex, "compression: user agent expression")},
		{"compression of no type", &RoutePolicy{Compression: &Compression{Level: 1}},
			route("Policy.Compression.ContentTypes", ErrNoOp, "compression: no content type")},
		{"compression types unsorted", &RoutePolicy{Compression: &Compression{Level: 1, ContentTypes: []string{"text/plain", "text/html"}}},
			route("Policy.Compression.ContentTypes", ErrUnsorted, "not sorted")},
		{"compression type with parameters", &RoutePolicy{Compression: &Compression{Level: 1, ContentTypes: []string{"text/html; charset=utf-8"}}},
			route("Policy.Compression.ContentTypes[0]", ErrBadHeader, "not a lower-case type/subtype")},
		{"compression type twice", &RoutePolicy{Compression: &Compression{Level: 1, ContentTypes: []string{"text/html", "text/html"}}},
			route("Policy.Compression.ContentTypes", ErrDuplicate, "listed twice")},
		{"compression of * and more", &RoutePolicy{Compression: &Compression{Level: 1, ContentTypes: []string{"*", "text/html"}}},
			route("Policy.Compression.ContentTypes[0]", ErrConflict, "* with other types")},
	})
}

func TestValidateCORSAndMirrors(t *testing.T) {
	const cluster = "default/a/80"
	mirror := func(m Mirror) *RoutePolicy {
		m.Cluster, m.Percent = cluster, 100
		return &RoutePolicy{Mirrors: []Mirror{m}}
	}
	runPolicyCases(t, []policyCase{
		{"CORS with any origin and a list", &RoutePolicy{CORS: &CORS{AnyOrigin: true, AllowOrigins: []StringMatch{{Exact: "https://a.example"}}}},
			route("Policy.CORS.AllowOrigins", ErrConflict, "cors: exactly one of any origin and a list of origins")},
		{"CORS origin regex RE2 refuses", &RoutePolicy{CORS: &CORS{AllowOrigins: []StringMatch{{Exact: "https://a.example"}, {Regex: "(a"}}}},
			route("Policy.CORS.AllowOrigins[1].Regex", ErrBadRegex, "cors: origin: error parsing regexp")},
		{"CORS origin matching anything", &RoutePolicy{CORS: &CORS{AllowOrigins: []StringMatch{{}}}},
			route("Policy.CORS.AllowOrigins[0]", ErrConflict, "say any origin")},
		{"CORS header list with CR LF", &RoutePolicy{CORS: &CORS{AnyOrigin: true, ExposeHeaders: "x-a\r\nx-b: 1"}},
			route("Policy.CORS.ExposeHeaders", ErrBadHeader, "cors: expose headers: control characters")},
		{"mirror host with a path", mirror(Mirror{Host: "b.example/x"}),
			route("Policy.Mirrors[0].Host", ErrBadHost, `mirror host "b.example/x"`)},
		{"mirror prefix with a query", mirror(Mirror{Path: &MirrorPath{Prefix: "/a?b", Then: MirrorRequestURI}}),
			route("Policy.Mirrors[0].Path.Prefix", ErrBadPath, `mirror path prefix "/a?b"`)},
		{"mirror path followed by nothing known", mirror(Mirror{Path: &MirrorPath{Prefix: "/a", Then: "Fragment"}}),
			route("Policy.Mirrors[0].Path.Then", ErrUnknownValue, `"Fragment" follows the prefix`)},
		{"mirror path of a query alone", mirror(Mirror{Path: &MirrorPath{Then: MirrorQuery}}),
			route("Policy.Mirrors[0].Path", ErrBadPath, "a query alone is no path")},
	})
}

func TestValidateRequestBlock(t *testing.T) {
	for _, tc := range []struct {
		name  string
		block *RequestBlock
		want  violation
	}{
		{"no rule", &RequestBlock{}, violation{KindListener, "http", 0, "Block.Headers", ErrNoOp, "a request block with no rule"}},
		{"a pseudo-header", &RequestBlock{Headers: []HeaderBlock{{Header: ":path", All: true}}},
			violation{KindListener, "http", 0, "Block.Headers[0].Header", ErrBadHeader, `header ":path": not a header name`}},
		{"headers out of order", &RequestBlock{Headers: []HeaderBlock{{Header: "user-agent", All: true}, {Header: "referer", All: true}}},
			violation{KindListener, "http", 0, "Block.Headers[1].Header", ErrUnsorted, `not sorted and unique at "referer"`}},
		{"a header twice", &RequestBlock{Headers: []HeaderBlock{{Header: "referer", All: true}, {Header: "referer", All: true}}},
			violation{KindListener, "http", 0, "Block.Headers[1].Header", ErrDuplicate, `not sorted and unique at "referer"`}},
		{"a rule matching nothing", &RequestBlock{Headers: []HeaderBlock{{Header: "referer"}}},
			violation{KindListener, "http", 0, "Block.Headers[0]", ErrNoOp, `header "referer": no value`}},
		{"a regex RE2 refuses", &RequestBlock{Headers: []HeaderBlock{{Header: "referer", Regexes: []string{"x", "(a"}}}},
			violation{KindListener, "http", 0, "Block.Headers[0].Regexes[1]", ErrBadRegex, `regex "(a": error parsing regexp`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := valid()
			m.Listeners[0].Block = tc.block
			wantViolations(t, m.Validate(), tc.want)
		})
	}
}

func TestValidateAuth(t *testing.T) {
	basic := &BasicAuth{Realm: "r", Users: "u:$apr1$x"}
	ext := func(e ExternalAuth) *RoutePolicy {
		if e.URL == "" {
			e.URL = "http://auth.example/check"
		}
		return &RoutePolicy{Auth: &Auth{External: &e}}
	}
	runPolicyCases(t, []policyCase{
		{"auth of no kind", &RoutePolicy{Auth: &Auth{}},
			route("Policy.Auth", ErrNoOp, "auth: no kind of authentication")},
		{"address check without any", &RoutePolicy{Auth: &Auth{Basic: basic, Address: &IPRules{Allow: []string{"10.0.0.0/8"}}}},
			route("Policy.Auth.Address", ErrConflict, "an address check without any")},
		{"empty address check", &RoutePolicy{Auth: &Auth{Basic: basic, Any: true, Address: &IPRules{}}},
			route("Policy.Auth.Address", ErrNoOp, "an empty address check")},
		{"address check on no CIDR", &RoutePolicy{Auth: &Auth{Basic: basic, Any: true, Address: &IPRules{Allow: []string{"10.0.0.0/8"}, Deny: []string{"10.0.0.1/8"}}}},
			route("Policy.Auth.Address.Deny[0]", ErrBadAddress, `auth: address "10.0.0.1/8" is not a canonical CIDR`)},
		{"realm with a quote", &RoutePolicy{Auth: &Auth{Basic: &BasicAuth{Realm: `a"b`}}},
			route("Policy.Auth.Basic.Realm", ErrBadHeader, "is not a quoted-string's content")},
		{"user file with a NUL", &RoutePolicy{Auth: &Auth{Basic: &BasicAuth{Users: "u:x\x00"}}},
			route("Policy.Auth.Basic.Users", ErrBadContent, "the user file holds a NUL")},
		{"external auth at no http URL", ext(ExternalAuth{URL: "ftp://auth.example/"}),
			route("Policy.Auth.External.URL", ErrBadPath, "is not an http or https URL")},
		{"external auth method with CR LF", ext(ExternalAuth{Method: "GET\r\nX: 1"}),
			route("Policy.Auth.External.Method", ErrBadHeader, "external auth: method")},
		{"signin parameter that is no name", ext(ExternalAuth{SigninParam: "a=b"}),
			route("Policy.Auth.External.SigninParam", ErrBadName, `signin parameter "a=b" is not a parameter name`)},
		{"cache duration without a key", ext(ExternalAuth{CacheDuration: "200 1m"}),
			route("Policy.Auth.External.CacheDuration", ErrConflict, "a cache duration without a cache key")},
		{"response header that is no name", ext(ExternalAuth{ResponseHeaders: []string{"x-a", "x b"}}),
			route("Policy.Auth.External.ResponseHeaders[1]", ErrBadHeader, `response header "x b"`)},
		{"proxy-set header value with a newline", ext(ExternalAuth{ProxySetHeaders: []Header{{Name: "x-a", Value: "1\n2"}}}),
			route("Policy.Auth.External.ProxySetHeaders[0]", ErrBadHeader, `proxy-set header "x-a"`)},
		{"proxy-set header twice", ext(ExternalAuth{ProxySetHeaders: []Header{{Name: "x-a", Value: "1"}, {Name: "x-a", Value: "2"}}}),
			route("Policy.Auth.External.ProxySetHeaders[1].Name", ErrDuplicate, `"x-a" twice`)},
		{"proxy-set headers out of order", ext(ExternalAuth{ProxySetHeaders: []Header{{Name: "x-b", Value: "1"}, {Name: "x-a", Value: "2"}}}),
			route("Policy.Auth.External.ProxySetHeaders[1].Name", ErrUnsorted, `not sorted, or "x-a" twice`)},
		{"upstream header without a value", ext(ExternalAuth{UpstreamHeaders: []AuthHeader{{Name: "x-user"}}}),
			route("Policy.Auth.External.UpstreamHeaders[0]", ErrBadHeader, `upstream header "x-user" is not a header name with a value`)},
		{"upstream header part from a pseudo-header", ext(ExternalAuth{UpstreamHeaders: []AuthHeader{{Name: "x-user", Parts: []AuthValuePart{{Text: "u="}, {FromAnswer: ":status"}}}}}),
			route("Policy.Auth.External.UpstreamHeaders[0].Parts[1]", ErrBadHeader, `upstream header "x-user": part`)},
	})
}

// selfSignedPEM is a CA certificate that parses.
func selfSignedPEM(t *testing.T) PEM {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2126, 1, 1, 0, 0, 0, 0, time.UTC),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestValidateTLS(t *testing.T) {
	ca := selfSignedPEM(t)
	const host = "a.example.com"
	clientCert := func(c ClientCert) ClientCert {
		if c.CA == nil {
			c.CA = ca
		}
		if c.Verify == "" {
			c.Verify = VerifyOn
		}
		if c.Depth == 0 {
			c.Depth = 1
		}
		return c
	}
	upstream := func(tls UpstreamTLS) func(*IR) {
		return func(m *IR) {
			p := &ClusterPolicy{TLS: &tls}
			name := ClusterName("default/a/80", p)
			m.Clusters[0].Name, m.Clusters[0].Policy = name, p
			m.VirtualHosts[0].Routes[0].Action.Forward.Clusters[0].Cluster = name
		}
	}
	cluster := func(m *IR) string { return m.Clusters[0].Name }
	for _, tc := range []struct {
		name    string
		breakIt func(*IR)
		want    func(*IR) violation
	}{
		{"client certificates of an unknown mode", func(m *IR) { c := clientCert(ClientCert{Verify: "maybe"}); m.VirtualHosts[0].ClientCert = &c },
			func(*IR) violation {
				return violation{KindVirtualHost, host, 0, "ClientCert.Verify", ErrUnknownValue, `client certificates: unknown verify mode "maybe"`}
			}},
		{"client certificates with a CA that is no PEM", func(m *IR) { c := clientCert(ClientCert{CA: PEM("nope")}); m.VirtualHosts[0].ClientCert = &c },
			func(*IR) violation {
				return violation{KindVirtualHost, host, 0, "ClientCert.CA", ErrBadCertificate, "client certificates: CA: not PEM"}
			}},
		{"client certificates verified too deep", func(m *IR) { c := clientCert(ClientCert{Depth: 101}); m.VirtualHosts[0].ClientCert = &c },
			func(*IR) violation {
				return violation{KindVirtualHost, host, 0, "ClientCert.Depth", ErrOutOfRange, "depth 101 out of range"}
			}},
		{"client certificates' error page with a quote", func(m *IR) { c := clientCert(ClientCert{ErrorPage: `/e"`}); m.VirtualHosts[0].ClientCert = &c },
			func(*IR) violation {
				return violation{KindVirtualHost, host, 0, "ClientCert.ErrorPage", ErrBadPath, "holds characters a Location may not"}
			}},
		{"client certificates' subject match RE2 refuses", func(m *IR) { c := clientCert(ClientCert{MatchSubject: "(a"}); m.VirtualHosts[0].ClientCert = &c },
			func(*IR) violation {
				return violation{KindVirtualHost, host, 0, "ClientCert.MatchSubject", ErrBadRegex, "subject match: error parsing regexp"}
			}},
		{"client certificates optional in the handshake alone", func(m *IR) {
			c := clientCert(ClientCert{Verify: VerifyOptional, Handshake: true})
			m.VirtualHosts[0].ClientCert = &c
		},
			func(*IR) violation {
				return violation{KindVirtualHost, host, 0, "ClientCert.Verify", ErrConflict, `verify mode "optional" cannot be applied by the handshake alone`}
			}},
		{"client certificates' error page in the handshake alone", func(m *IR) {
			c := clientCert(ClientCert{ErrorPage: "/e", Handshake: true})
			m.VirtualHosts[0].ClientCert = &c
		},
			func(*IR) violation {
				return violation{KindVirtualHost, host, 0, "ClientCert.Handshake", ErrConflict, "act on requests, not on the handshake alone"}
			}},
		{"host cipher that is none", func(m *IR) { m.VirtualHosts[0].TLSCiphers = "ECDHE-RSA-AES128-GCM-SHA256:!MD5" },
			func(*IR) violation {
				return violation{KindVirtualHost, host, 0, "TLSCiphers", ErrBadCipher, `cipher "!MD5"`}
			}},
		{"upstream SNI that is no host", upstream(UpstreamTLS{SNI: "a b"}),
			func(m *IR) violation {
				return violation{KindCluster, cluster(m), 0, "Policy.TLS.SNI", ErrBadHost, `tls: bad SNI "a b"`}
			}},
		{"upstream name to verify without a CA", upstream(UpstreamTLS{VerifyName: "b.example"}),
			func(m *IR) violation {
				return violation{KindCluster, cluster(m), 0, "Policy.TLS.CA", ErrConflict, "a name or depth to verify without a CA"}
			}},
		{"upstream subject alt names without a CA", upstream(UpstreamTLS{SubjectAltNames: []SubjectAltName{{DNS: "b.example"}}}),
			func(m *IR) violation {
				return violation{KindCluster, cluster(m), 0, "Policy.TLS.SubjectAltNames", ErrConflict, "subject alt names need a CA"}
			}},
		{"upstream subject alt name of both kinds", upstream(UpstreamTLS{CA: ca, SubjectAltNames: []SubjectAltName{{DNS: "b.example", URI: "spiffe://b"}}}),
			func(m *IR) violation {
				return violation{KindCluster, cluster(m), 0, "Policy.TLS.SubjectAltNames[0]", ErrBadHost, "exactly one of a DNS name and a URI"}
			}},
		{"upstream subject alt name URI without a scheme", upstream(UpstreamTLS{CA: ca, SubjectAltNames: []SubjectAltName{{URI: "b/c"}}}),
			func(m *IR) violation {
				return violation{KindCluster, cluster(m), 0, "Policy.TLS.SubjectAltNames[0]", ErrBadHost, `URI "b/c" is no absolute URI`}
			}},
		{"upstream client key without its chain", upstream(UpstreamTLS{ClientKey: PEM("k")}),
			func(m *IR) violation {
				return violation{KindCluster, cluster(m), 0, "Policy.TLS.ClientChain", ErrConflict, "needs both chain and key"}
			}},
		{"upstream TLS version unknown", upstream(UpstreamTLS{MinVersion: "TLSv1.1"}),
			func(m *IR) violation {
				return violation{KindCluster, cluster(m), 0, "Policy.TLS.MinVersion", ErrUnknownValue, `versions "TLSv1.1" to ""`}
			}},
		{"upstream TLS versions the wrong way round", upstream(UpstreamTLS{MinVersion: "TLSv1.3", MaxVersion: "TLSv1.2"}),
			func(m *IR) violation {
				return violation{KindCluster, cluster(m), 0, "Policy.TLS.MaxVersion", ErrConflict, `versions "TLSv1.3" to "TLSv1.2"`}
			}},
		{"upstream cipher list in one", upstream(UpstreamTLS{Ciphers: []string{"A", "B:C"}}),
			func(m *IR) violation {
				return violation{KindCluster, cluster(m), 0, "Policy.TLS.Ciphers[1]", ErrBadCipher, `cipher "B:C"`}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := valid()
			tc.breakIt(m)
			wantViolations(t, m.Validate(), tc.want(m))
		})
	}
}

func TestValidateNamesAndRewrites(t *testing.T) {
	runPolicyCases(t, []policyCase{
		{"retry condition with a comma", &RoutePolicy{Retries: &Retries{Attempts: 1, On: []string{"5xx,reset"}}},
			route("Policy.Retries.On[0]", ErrBadName, `retry condition "5xx,reset"`)},
		{"retry method that is no token", &RoutePolicy{Retries: &Retries{Attempts: 1, On: []string{"5xx"}, NotMethods: []string{"PO ST"}}},
			route("Policy.Retries.NotMethods[0]", ErrBadName, `retry method "PO ST"`)},
		{"retry backoff under a millisecond", &RoutePolicy{Retries: &Retries{Attempts: 1, On: []string{"5xx"}, Backoff: Duration(time.Microsecond)}},
			route("Policy.Retries.Backoff", ErrOutOfRange, "retry backoff 1µs: negative, or under Envoy's millisecond")},
		{"hash cookie with a =", &RoutePolicy{Hash: []HashPart{{Kind: HashCookie, Name: "a=b"}}},
			route("Policy.Hash[0].Name", ErrBadName, `hash Cookie "a=b"`)},
		{"response rewrite of nothing", &RoutePolicy{ResponseRewrite: &ResponseRewrite{}},
			route("Policy.ResponseRewrite", ErrNoOp, "response rewrite rewrites nothing")},
		{"redirect rewrite from nothing", &RoutePolicy{ResponseRewrite: &ResponseRewrite{Redirect: &Replace{To: "/b"}}},
			route("Policy.ResponseRewrite.Redirect.From", ErrNoOp, "response rewrite redirect: nothing to replace")},
		{"redirect rewrite with CR LF", &RoutePolicy{ResponseRewrite: &ResponseRewrite{Redirect: &Replace{From: "/a", To: "/b\r\nX: 1"}}},
			route("Policy.ResponseRewrite.Redirect", ErrBadHeader, "response rewrite redirect: control characters")},
		{"cookie path rewrite with a ;", &RoutePolicy{ResponseRewrite: &ResponseRewrite{CookiePath: &Replace{From: "/a", To: "/b; Secure"}}},
			route("Policy.ResponseRewrite.CookiePath", ErrBadHeader, "is no cookie attribute")},
		{"cookie flags of an unknown match", &RoutePolicy{ResponseRewrite: &ResponseRewrite{CookieFlags: []CookieFlagsRule{{Cookie: CookieName{Match: "Regex", Text: "a"}, Flags: []CookieFlag{CookieSecure}}}}},
			route("Policy.ResponseRewrite.CookieFlags[0].Cookie.Match", ErrUnknownValue, `name match "Regex"`)},
		{"cookie flags of an empty exact name", &RoutePolicy{ResponseRewrite: &ResponseRewrite{CookieFlags: []CookieFlagsRule{{Cookie: CookieName{Match: CookieNameExact}, Flags: []CookieFlag{CookieSecure}}}}},
			route("Policy.ResponseRewrite.CookieFlags[0].Cookie.Text", ErrBadName, "no name to match exactly")},
		{"cookie flags of a name with a ;", &RoutePolicy{ResponseRewrite: &ResponseRewrite{CookieFlags: []CookieFlagsRule{{Cookie: CookieName{Match: CookieNamePrefix, Text: "a;b"}, Flags: []CookieFlag{CookieSecure}}}}},
			route("Policy.ResponseRewrite.CookieFlags[0].Cookie.Text", ErrBadName, `name "a;b"`)},
		{"cookie flag nginx does not know", &RoutePolicy{ResponseRewrite: &ResponseRewrite{CookieFlags: []CookieFlagsRule{{Cookie: CookieName{Match: CookieNameContains}, Flags: []CookieFlag{CookieSecure, "samesite"}}}}},
			route("Policy.ResponseRewrite.CookieFlags[0].Flags[1]", ErrUnknownValue, `flag "samesite"`)},
		{"cookie flags without a flag", &RoutePolicy{ResponseRewrite: &ResponseRewrite{CookieFlags: []CookieFlagsRule{{Cookie: CookieName{Match: CookieNameExact, Text: "a"}}}}},
			route("Policy.ResponseRewrite.CookieFlags", ErrNoOp, "no rule has a flag")},
		{"body substitution without pairs", &RoutePolicy{ResponseRewrite: &ResponseRewrite{Body: &BodySubstitution{Once: true}}},
			route("Policy.ResponseRewrite.Body.Pairs", ErrNoOp, "body substitution: no pairs")},
		{"body substitution from nothing", &RoutePolicy{ResponseRewrite: &ResponseRewrite{Body: &BodySubstitution{Pairs: []Replace{{To: "x"}}}}},
			route("Policy.ResponseRewrite.Body.Pairs[0].From", ErrNoOp, "nothing to replace")},
		{"body substitution from capitals", &RoutePolicy{ResponseRewrite: &ResponseRewrite{Body: &BodySubstitution{Pairs: []Replace{{From: "<HEAD>", To: "x"}}}}},
			route("Policy.ResponseRewrite.Body.Pairs[0].From", ErrBadContent, "not lower case")},
		{"body substitution with NUL", &RoutePolicy{ResponseRewrite: &ResponseRewrite{Body: &BodySubstitution{Pairs: []Replace{{From: "a", To: "b\x00"}}}}},
			route("Policy.ResponseRewrite.Body.Pairs[0]", ErrBadContent, "NUL")},
		{"body substitution of no media type", &RoutePolicy{ResponseRewrite: &ResponseRewrite{Body: &BodySubstitution{Pairs: []Replace{{From: "a"}}, Types: []string{"text/css", "*"}}}},
			route("Policy.ResponseRewrite.Body.Types[1]", ErrBadName, `"*" is not a lower-case media type`)},
		{"body substitution of a capital type", &RoutePolicy{ResponseRewrite: &ResponseRewrite{Body: &BodySubstitution{Pairs: []Replace{{From: "a"}}, Types: []string{"Text/CSS"}}}},
			route("Policy.ResponseRewrite.Body.Types[0]", ErrBadName, `"Text/CSS"`)},
	})
	t.Run("query parameter with no name", func(t *testing.T) {
		m := valid()
		m.VirtualHosts[0].Routes[0].Match.Query = []QueryMatch{{Value: StringMatch{Exact: "1"}}}
		wantViolations(t, m.Validate(), route("Match.Query[0].Name", ErrBadName, `query match: bad parameter name ""`))
	})
	t.Run("direct response content type with CR LF", func(t *testing.T) {
		m := valid()
		m.VirtualHosts[0].Routes[0].Action = Action{Direct: &DirectResponse{Status: 200, ContentType: "text/plain\r\nx: 1"}}
		wantViolations(t, m.Validate(), route("Action.Direct.ContentType", ErrBadHeader, "direct response content type"))
	})
	t.Run("access log format without its newline", func(t *testing.T) {
		m := valid()
		m.Listeners[0].Downstream = &Downstream{Forwarded: ForwardedAppend, ProxyHeaders: ProxyHeadersAsSent, AccessLog: &AccessLog{Format: "%START_TIME%"}}
		wantViolations(t, m.Validate(), violation{KindListener, "http", 0, "Downstream.AccessLog.Format", ErrBadFormat, "access log: access log format without its newline"})
	})
}
