package annotations

// ingress-nginx's upstream keys (its BackendProtocol, ProxySSL,
// UpstreamVhost, ServiceUpstream, LoadBalancing and UpstreamHashBy groups):
// how Envoy talks to a backend and which endpoint it picks. Each value is
// read as ingress-nginx's validator reads it; a value it would not apply is
// an error here, so the key is reported and not applied.

// BackendProtocol is the protocol spoken to the backend.
var BackendProtocol = key[string](&definition{
	name:  "backend-protocol",
	under: Nginx,
	scope: ScopeCluster,
	doc: `The protocol spoken to the backend, in any case: HTTP (the default), HTTPS (HTTP/1.1 over TLS), GRPC (HTTP/2 without TLS), ` +
		`GRPCS (HTTP/2 over TLS), H2C (HTTP/2 without TLS), AUTO_HTTP (nginx's $scheme: HTTPS for the requests that came over TLS, ` +
		`HTTP for the others) or FCGI. Over TLS the backend's certificate is not verified unless proxy-ssl-verify is "on", as nginx does.`,
	verdict: HonouredWithDifference,
	note: `AUTO_HTTP is served as nginx serves it: an Envoy cluster has one transport, so each route sends the requests of the HTTPS ` +
		`listener to a second cluster of the backend, the one HTTPS would give it (the proxy-ssl keys apply to it), and those of the ` +
		`HTTP listener to a plain one; custom-http-errors' error pages are fetched over plain HTTP on both, as nginx's are. ` +
		`FCGI is refused: Envoy has no FastCGI client, and the Ingress's routes answer 503 ` +
		`rather than speak HTTP to a FastCGI server. H2C, which ingress-nginx's validator does not take, is read as GRPC is. gRPC ` +
		`is proxied as HTTP/2, so any HTTP/2 backend works with GRPC, and the route's timeouts apply to the whole call.`,
}, parseBackendProtocol)

// ProxySSLSecret names the Secret with the CA (and client certificate) for
// TLS to the backend.
var ProxySSLSecret = key[string](&definition{
	name:   "proxy-ssl-secret",
	under:  Nginx,
	scope:  ScopeCluster,
	refers: KindSecret,
	doc: `A Secret "namespace/name" of the Ingress's own namespace, with ca.crt (the CA that signs the backend's certificate) and, ` +
		`optionally, tls.crt and tls.key (the client certificate presented to the backend). It turns on the other proxy-ssl keys. ` +
		`A Secret of another namespace, missing, or without a valid ca.crt is reported and the Ingress's routes answer 503, as ` +
		`ingress-nginx denies the location.`,
	verdict: HonouredWithDifference,
	note: `The CA and the client certificate are written into the cluster itself: a rotated Secret makes a new cluster (its name ` +
		`carries a hash of its policy), which Envoy swaps in, draining the old one. The Secret does not make the backend speak TLS: ` +
		`that is backend-protocol HTTPS or GRPCS (AUTO_HTTP: for the requests that came over TLS), as in nginx.`,
}, parseNamespacedName)

// ProxySSLVerify turns verification of the backend's certificate on.
var ProxySSLVerify = key[bool](&definition{
	name:    "proxy-ssl-verify",
	under:   Nginx,
	scope:   ScopeCluster,
	doc:     `"on": the backend's certificate must be signed by the proxy-ssl-secret's ca.crt (and name proxy-ssl-name when it is set), or the connection fails (502, as from nginx); "off" (the default): it is not checked.`,
	verdict: HonouredWithDifference,
	note: `A certificate that does not verify fails the connection (and its retries): Envoy's 503 for it is made nginx's 502 by the listener's local reply mapping. ` +
		`Without proxy-ssl-name nginx checks the certificate against its upstream's name ("upstream_balancer"), which no real certificate carries; Envoy checks the chain only.`,
}, parseOnOff)

// ProxySSLVerifyDepth bounds the backend's certificate chain.
var ProxySSLVerifyDepth = key[int](&definition{
	name:  "proxy-ssl-verify-depth",
	under: Nginx,
	scope: ScopeCluster,
	doc:   `How deep the backend's certificate chain may be when it is verified ("1", the default: signed by the CA itself).`,
}, parseCount)

// ProxySSLName is the name the backend's certificate is verified against.
var ProxySSLName = key[string](&definition{
	name:  "proxy-ssl-name",
	under: Nginx,
	scope: ScopeCluster,
	doc: `The DNS name the backend's certificate must carry when proxy-ssl-verify is "on", and the server name sent (SNI) when ` +
		`proxy-ssl-server-name is "on".`,
}, parseServerName)

// ProxySSLServerName says whether SNI is sent to the backend.
var ProxySSLServerName = key[bool](&definition{
	name:    "proxy-ssl-server-name",
	under:   Nginx,
	scope:   ScopeCluster,
	doc:     `"on": the backend is sent proxy-ssl-name as its server name (SNI); "off" (the default): no server name.`,
	verdict: HonouredWithDifference,
	note:    `Without proxy-ssl-name nginx would send its upstream's name ("upstream_balancer"), which no backend expects; Envoy sends none.`,
}, parseOnOff)

// ProxySSLProtocols are the TLS versions offered to the backend.
var ProxySSLProtocols = key[[]string](&definition{
	name:    "proxy-ssl-protocols",
	under:   Nginx,
	scope:   ScopeCluster,
	doc:     `The TLS versions offered to the backend: "TLSv1.2" (the default), "TLSv1.3", or both, space-separated.`,
	verdict: HonouredWithDifference,
	note:    `Envoy offers a range of versions, from the lowest listed to the highest, which is what a list of consecutive versions is.`,
}, parseTLSProtocols)

// ProxySSLCiphers are the TLS 1.2 ciphers offered to the backend.
var ProxySSLCiphers = key[[]string](&definition{
	name:    "proxy-ssl-ciphers",
	under:   Nginx,
	scope:   ScopeCluster,
	doc:     `The TLS 1.2 cipher suites offered to the backend, colon-separated OpenSSL names ("ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384"); "DEFAULT" (the default): Envoy's.`,
	verdict: HonouredWithDifference,
	note: `Envoy takes a list of BoringSSL's cipher names, not OpenSSL's expressions: a value with an alias or an exclusion ` +
		`("HIGH:!aNULL") or a name BoringSSL lacks is reported and Envoy's default ciphers are used. TLS 1.3's suites are not configurable.`,
}, parseCiphers)

// UpstreamVhost is the Host header sent upstream.
var UpstreamVhost = key[string](&definition{
	name:  "upstream-vhost",
	under: Nginx,
	scope: ScopeRoute,
	doc:   `The Host header the backend receives instead of the request's ("internal.example.com").`,
}, parseServerName)

// ServiceUpstream sends to the Service's cluster IP.
var ServiceUpstream = key[bool](&definition{
	name:  "service-upstream",
	under: Nginx,
	scope: ScopeCluster,
	doc: `"true": Envoy sends to the Service's cluster IP and port, leaving the choice of endpoint to kube-proxy, rather than to ` +
		`the endpoints themselves. A Service without a cluster IP (headless) or of type ExternalName is reported and sent to as usual.`,
	verdict: HonouredWithDifference,
	note:    `Envoy sees one endpoint: load-balance and upstream-hash-by have nothing to choose from, and retries go to the same address, as with nginx.`,
}, parseBool)

// LoadBalance is how an endpoint is picked.
var LoadBalance = key[string](&definition{
	name:    "load-balance",
	under:   Nginx,
	scope:   ScopeCluster,
	doc:     `How an endpoint is picked: "round_robin" (the default) or "ewma".`,
	verdict: HonouredWithDifference,
	note: `"ewma" (nginx's peak EWMA of response times, of two endpoints picked at random) becomes Envoy's least request (of two ` +
		`endpoints picked at random, the one with fewer requests in flight), which favours fast endpoints the same way without ` +
		`measuring latency. "chash", "chashsubset" and the sticky balancers are what upstream-hash-by and the affinity keys ask for; ` +
		`named here they are reported and round robin is used.`,
}, parseLoadBalance)

// UpstreamHashBy makes the endpoint a consistent hash of the request.
var UpstreamHashBy = key[[]HashPart](&definition{
	name:  "upstream-hash-by",
	under: Nginx,
	scope: ScopeCluster,
	doc: `The request's parts whose hash picks the endpoint, as nginx variables: $request_uri, $uri, $host, $remote_addr, ` +
		`$http_NAME, $cookie_NAME, $arg_NAME, alone or together ("$host$request_uri"). Requests with the same value go to the same ` +
		`endpoint while the endpoints stay the same, and few move when one comes or goes (a ring hash).`,
	verdict: HonouredWithDifference,
	note: `Envoy hashes each part and combines the hashes, and a request missing a part (a header, a cookie) is hashed on the ` +
		`others, or sent to any endpoint when none is present; nginx hashes the text the variables make. $uri is hashed with ` +
		`the query (as $request_uri). Other variables and literal text are refused (reported, not applied): Envoy cannot hash them.`,
}, parseHashBy)

// UpstreamHashBySubset hashes to a subset of endpoints.
var UpstreamHashBySubset = key[bool](&definition{
	name:    "upstream-hash-by-subset",
	under:   Nginx,
	scope:   ScopeCluster,
	doc:     `"true": the hash of upstream-hash-by picks a subset of upstream-hash-by-subset-size endpoints, and each request one of them.`,
	verdict: HonouredWithDifference,
	note:    `Envoy hashes to one endpoint, not to a subset: requests with the same value all go to that one endpoint (a subset of one), which nginx would spread over the subset.`,
}, parseBool)

// UpstreamHashBySubsetSize is the size of those subsets.
var UpstreamHashBySubsetSize = key[int](&definition{
	name:    "upstream-hash-by-subset-size",
	under:   Nginx,
	scope:   ScopeCluster,
	doc:     `The size of upstream-hash-by-subset's subsets ("3", the default).`,
	verdict: HonouredWithDifference,
	note:    `Read and checked, and without effect: the subset is always one endpoint (see upstream-hash-by-subset).`,
}, parseCount)

// upstreamKeys lists the keys of this file, for table.
func upstreamKeys() []*definition {
	return []*definition{
		BackendProtocol.def,
		ProxySSLSecret.def, ProxySSLVerify.def, ProxySSLVerifyDepth.def, ProxySSLName.def, ProxySSLServerName.def,
		ProxySSLProtocols.def, ProxySSLCiphers.def,
		UpstreamVhost.def, ServiceUpstream.def, LoadBalance.def,
		UpstreamHashBy.def, UpstreamHashBySubset.def, UpstreamHashBySubsetSize.def,
	}
}
