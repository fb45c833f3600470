package configmap

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ingress/snippet"
)

// Notes shared by groups of keys.
const (
	nginxProcess = "Tunes nginx's worker processes, memory or hash tables; Envoy has no such setting (its threads and buffers are its own)."
	nginxLogs    = "nginx's log files; ingress-xds's access log is Envoy's standard output (log-format-upstream), Envoy's own logs are its bootstrap's and its --log-level."
	streamNote   = "nginx's TCP/UDP proxying (its tcp-services and udp-services ConfigMaps), which ingress-xds does not serve."
	removedNote  = "Removed from ingress-nginx (its final release reads it no more)."
	gzipNote     = "true: every Ingress's responses are gzipped (Envoy's compressor) for the clients that accept gzip, as nginx.tmpl's gzip settings say: gzip-level, gzip-min-length, gzip-types, gzip_proxied any, gzip_vary on (Vary: Accept-Encoding), not a response already encoded, only 200, 403 and 404, a strong ETag made weak; a snippet's gzip directives override it for its Ingress or host. Differences: Envoy compresses a response without Content-Type and not one with Cache-Control: no-transform, where nginx does the opposite; HTTP/1.0 requests are refused by Envoy (426) either way."
	snippetNote  = "nginx configuration ingress-xds does not translate (docs/snippets.md), which may hold access rules: while it is set, every Ingress is refused (its paths answer 503); serve --unsupported-annotations=ignore serves them without it."
)

// table is every key of ingress-nginx's controller ConfigMap (the final
// release's docs/user-guide/nginx-configuration/configmap.md, and the keys
// its internal/ingress/controller/config/config.go and
// internal/ingress/defaults read beside), with what ingress-xds does with
// it. A key of the same name as an annotation is that annotation's default
// (its verdict is the annotation's, docs/annotations.md), as in
// ingress-nginx, whose annotation parsers take the ConfigMap's value as
// their default.
func table() []Key {
	return []Key{
		{Name: "add-headers", NginxDefault: `""`, verdict: annotations.HonouredWithDifference, apply: headerMapKey(func(s *Settings) *types.NamespacedName { return &s.addHeadersFrom }),
			Note: "The ConfigMap named (namespace/name, watched) gives every response its headers, replaced, as nginx.tmpl's more_set_headers at the http level: values read as nginx reads them, variables translated as in a snippet (docs/snippets.md); an Ingress's custom-headers and snippets, later, win. A header not translated whole leaves the whole ConfigMap unapplied, reported. Envoy's own answers to a request no route takes (404) do not carry them."},
		{Name: "allow-backend-server-header", NginxDefault: `"false"`, apply: allowBackendServerHeader,
			Note: "true: the backend's Server header reaches the client, Envoy's own only where the backend sent none (nginx's proxy_pass_header Server); false (the default): Envoy's replaces it, as nginx's own does."},
		only("allow-cross-namespace-resources", `"false"`, "false",
			"An annotation naming another namespace's Secret is refused, as ingress-nginx does with false; true is not honoured (reported, and treated as false)."),
		{Name: "allow-snippet-annotations", NginxDefault: `"false"`, apply: allowSnippetAnnotations,
			Note: "As in ingress-nginx: with annotations-risk-level Critical, true translates the snippet annotations (configuration-snippet, server-snippet, auth-snippet) and false drops them, the rest of the Ingress served (with a Warning). Without --configmap, snippets are translated (docs/security.md)."},
		{Name: "annotations-risk-level", NginxDefault: "High", verdict: annotations.HonouredWithDifference, apply: annotationsRiskLevel,
			Note: "An Ingress carrying one of ingress-nginx's keys of a higher risk (annotations-risk.md, docs/annotations.md's Risk column; Low, Medium, High, Critical, in any case) is refused, as ingress-nginx's Extract rejects it (parser.CheckAnnotationRisk), whatever serve --unsupported-annotations says: its paths answer 503, where ingress-nginx leaves it out, and it gets no status address. The snippets (Critical) below Critical make the Ingress refused unless serve --unsupported-annotations=ignore serves it without them; Critical lets them be used (with allow-snippet-annotations true). Another word is reported and treated as High, the default, where ingress-nginx reads it as Low."},
		{Name: "annotation-value-word-blocklist", NginxDefault: `""`, verdict: annotations.HonouredWithDifference, apply: wordBlocklist,
			Note: "An Ingress with an annotation under ingress-nginx's prefix whose value holds one of the words (comma-separated, as written, empty ones left out) is refused, as ingress-nginx's store drops it (store.go checkBadAnnotationValue): its paths answer 503 where ingress-nginx's host answers 404, and it gets no status address, as ingress-nginx's store never lists it. ingress-xds needs no such filter (snippets are translated into typed policies, and nothing free-form reaches Envoy: docs/snippets.md), but a team that relies on it keeps what it refused."},
		{Name: "hide-headers", NginxDefault: "empty", verdict: annotations.HonouredWithDifference, apply: hideHeaders,
			Note: "The backend's response headers (comma-separated) the client never sees, on every route of both listeners, as nginx.tmpl's proxy_hide_header at http level, beside those nginx always hides (X-Accel-*, X-Pad; docs/security.md), which are hidden without a ConfigMap too; custom-headers and a snippet's more_set_headers may set one again, as there. nginx leaves them on a GRPC location (grpc_pass reads grpc_hide_header) and on a location whose snippet hides headers of its own; Envoy hides them there too. A header that frames the response (Content-Length, Transfer-Encoding, ...) is reported and not hidden."},
		ignored("access-log-params", `""`, "nginx's buffer=, flush= and gzip parameters of its access_log; Envoy buffers its access log itself and writes it out about once a second."),
		{Name: "access-log-path", NginxDefault: `"/var/log/nginx/access.log"`, verdict: annotations.HonouredWithDifference, apply: accessLogPath,
			Note: "Where the access log goes: /dev/stdout (also ingress-nginx's default, which its image links to its standard output) or /dev/stderr. Another path is reported and treated as unset: the control plane cannot know which files Envoy's node lets it open, and a file Envoy cannot open would make it refuse every listener; collect the log from the pod's output."},
		{Name: "http-access-log-path", NginxDefault: `""`, verdict: annotations.HonouredWithDifference, apply: accessLogPath,
			Note: "As access-log-path, which it overrides for HTTP requests (the only ones ingress-xds serves)."},
		ignored("stream-access-log-path", `""`, nginxLogs),
		{Name: "enable-access-log-for-default-backend", NginxDefault: `"false"`, apply: accessLogForDefaultBackend,
			Note: "true: the requests for a host no Ingress serves (Envoy's 404, ingress-nginx's default server) are logged too; by default they are not, as in ingress-nginx. A known host's path that no rule matches is logged either way."},
		ignored("enable-auth-access-log", `"false"`, nginxLogs),
		ignored("error-log-path", `"/var/log/nginx/error.log"`, nginxLogs),
		refuseIfTrue("enable-modsecurity", `"false"`, "ModSecurity, a web application firewall ingress-xds does not have: while it is true, every Ingress is refused (its paths answer 503), as one carrying enable-modsecurity is; serve --unsupported-annotations=ignore serves them without it."),
		refuseIfSet("modsecurity-snippet", `""`, snippetNote),
		refuseIfTrue("enable-owasp-modsecurity-crs", `"false"`, "ModSecurity's core rule set: as enable-modsecurity."),
		ignored("client-header-buffer-size", `"1k"`, nginxProcess),
		{Name: "client-header-timeout", NginxDefault: "60", served: true, verdict: annotations.HonouredWithDifference, apply: clientHeaderTimeout,
			Note: "Seconds a client may take to send a request's headers, then it gets 408, on both listeners (Envoy's request_headers_timeout). Envoy counts from the headers' first byte, nginx from the connection's opening (or, on a kept-alive one, the request's first byte). Unset: no bound, unless serve --nginx-defaults (on when serve takes over ingress-nginx's class) gives ingress-nginx's 60."},
		annotation("client-body-buffer-size", `"8k"`),
		notYet("client-body-timeout", "60", ""),
		{Name: "disable-access-log", NginxDefault: `"false"`, apply: disableAccessLog, Note: "true: no access log (log-format-upstream)."},
		{Name: "disable-http-access-log", NginxDefault: `"false"`, apply: disableAccessLog, Note: "As disable-access-log."},
		ignored("disable-stream-access-log", `"false"`, nginxLogs),
		{Name: "disable-ipv6", NginxDefault: `"false"`, verdict: annotations.HonouredWithDifference, apply: disableIPv6,
			Note: "true: the listeners take IPv4 clients alone, as nginx.tmpl then writes no listen [::]. false: they take IPv6 clients too only where serve --listen-address is :: (IPv4 and IPv6 on one socket), where ingress-nginx listens on IPv6 whenever its pod has it: Envoy cannot find out whether each node has IPv6, and a listener it cannot bind serves nothing, so IPv6 is the operator's choice (docs/install.md)."},
		ignored("disable-ipv6-dns", `"false"`, "nginx's resolver; Envoy's addresses come from the control plane."),
		{Name: "enable-underscores-in-headers", NginxDefault: `"false"`, served: true, verdict: annotations.HonouredWithDifference, apply: enableUnderscoresInHeaders,
			Note: "false: a request header whose name has an underscore (X_Forwarded_For, X_Auth_User) is dropped before routing, source ranges, authentication or the backend see it, as nginx ignores it (with ignore-invalid-headers true, its default); true: it is passed on. Unset, Envoy passes it on, unless serve --nginx-defaults (on when serve takes over ingress-nginx's class) gives ingress-nginx's false. With true, nginx's variables would also read such a header as the dashed name ($http_x_forwarded_for an X_Forwarded_For); Envoy reads the dashed name alone and passes the other on as it is."},
		notYet("enable-ocsp", `"false"`, ""),
		{Name: "ignore-invalid-headers", NginxDefault: `"true"`, verdict: annotations.HonouredWithDifference, apply: ignoreInvalidHeaders,
			Note: "false: a header whose name has an underscore is passed on even with enable-underscores-in-headers false, as nginx passes the headers it finds invalid then. Other names nginx finds invalid (a byte outside letters, digits and dashes) Envoy refuses or passes by its own rules, whatever the key says."},
		{Name: "retry-non-idempotent", NginxDefault: `"false"`, apply: retryNonIdempotent,
			Note: "true: every Ingress's proxy-next-upstream (annotation, this ConfigMap's key or ingress-nginx's default \"error timeout\") takes non_idempotent, as nginx.tmpl writes it: a POST, LOCK or PATCH is retried on another endpoint like any other method, even once sent. \"off\" still retries nothing."},
		ignored("error-log-level", `"notice"`, nginxLogs),
		ignored("http2-max-field-size", `""`, removedNote),
		ignored("http2-max-header-size", `""`, removedNote),
		ignored("http2-max-requests", "0", "nginx 1.27, which ingress-nginx's final release builds, ignores http2_max_requests (obsolete since nginx 1.19.7): keep-alive-requests bounds the requests of an HTTP/2 connection too, in nginx and here."),
		{Name: "http2-max-concurrent-streams", NginxDefault: "128", served: true, apply: http2MaxConcurrentStreams,
			Note: "The HTTP/2 streams a client connection may have open at once; more are refused (REFUSED_STREAM), as nginx refuses them. Unset: Envoy's bound (2147483647), unless serve --nginx-defaults gives ingress-nginx's 128."},
		{Name: "hsts", NginxDefault: `"true"`, served: true, verdict: annotations.HonouredWithDifference, apply: hsts,
			Note: "Every response of the HTTPS listener carries Strict-Transport-Security (max-age, includeSubDomains and preload from the keys below), replacing the backend's, as ingress-nginx's TLS servers do. Only when the ConfigMap says \"true\": ingress-nginx's default (on without the key) is not applied."},
		{Name: "hsts-include-subdomains", NginxDefault: `"true"`, apply: hstsSubdomains, Note: "With hsts."},
		{Name: "hsts-max-age", NginxDefault: `"31536000"`, apply: hstsMaxAge, Note: "With hsts: seconds."},
		{Name: "hsts-preload", NginxDefault: `"false"`, apply: hstsPreload, Note: "With hsts."},
		{Name: "keep-alive", NginxDefault: "75", apply: keepAlive,
			Note: "Seconds a client connection may stay idle between requests (Envoy's idle timeout of both listeners); 0: no keep-alive, every connection closed after its response. Unset: Envoy's hour, not nginx's 75 s."},
		{Name: "keep-alive-requests", NginxDefault: "1000", apply: keepAliveRequests,
			Note: "Requests a client connection may carry, then Envoy closes it (max_requests_per_connection of both listeners; HTTP/2 streams count alike). Unset: no bound."},
		ignored("large-client-header-buffers", `"4 8k"`, "nginx's buffers for long request headers; Envoy's limit is its own (60 KiB of headers)."),
		{Name: "log-format-escape-none", NginxDefault: `"false"`, verdict: annotations.HonouredWithDifference, apply: logEscapeNone,
			Note: "Envoy writes a text format's values unescaped whatever it says, as nginx's escape=none; nginx's default escapes quotes, backslashes and bytes outside printable ASCII as \\xHH. true wins over log-format-escape-json, as in nginx.tmpl."},
		{Name: "log-format-escape-json", NginxDefault: `"false"`, verdict: annotations.HonouredWithDifference, apply: logEscapeJSON,
			Note: "true: log-format-upstream, which must then be a JSON object once its variables are values (`{\"status\": $status, \"uri\": \"$uri\"}`), is written as Envoy's JSON format: every value escaped as JSON, as nginx's escape=json. Differences: a value that is one variable alone is written typed (200, not \"200\") and null when it has none, where nginx writes its text and \"\"; keys come in alphabetical order. A format that is no JSON object is reported and written as text."},
		{Name: "log-format-upstream", NginxDefault: "`$remote_addr - $remote_user [$time_local] ...`", served: true, nginxValue: DefaultLogFormat, verdict: annotations.HonouredWithDifference, apply: logFormatUpstream,
			Note: "Every request is written in this nginx log_format (to access-log-path: Envoy's standard output), each variable as Envoy command operators: " +
				"$remote_addr, $binary_remote_addr (as text), $realip_remote_addr (the peer), $remote_port, $server_addr, $server_port, $time_local, $time_iso8601, $msec, " +
				"$request, $request_method, $request_uri, $uri, $document_uri, $args, $query_string, $server_protocol, $scheme, $host, $http_host, $status, " +
				"$body_bytes_sent, $bytes_sent, $request_length (the bytes Envoy read of the request), $request_time (seconds, as nginx), " +
				"$upstream_addr (the last endpoint tried, where nginx lists every one), $upstream_status and $upstream_response_length (\"-\" for Envoy's own answers), " +
				"$upstream_response_time (whole milliseconds, not seconds: Envoy's CEL has no upstream timing), $req_id, $request_id, $ssl_protocol, $ssl_cipher, " +
				"$ssl_server_name, $connection, $hostname, $http_NAME, $sent_http_NAME, $cookie_NAME, " +
				"and the route's: $namespace and $ingress_name (its Ingress), $service_name and $service_port (its backend as the Ingress writes it; " +
				"the mainline's for a canary's request, as ingress-nginx's location), $proxy_upstream_name (ingress-nginx's upstream name, namespace-service-port), " +
				"$proxy_alternative_upstream_name (the canary's upstream name when the canary took the request, else empty), written by the renderer as route metadata (only those the format reads; $proxy_upstream_name is read from the cluster's name where that says it). " +
				"$remote_user is the Basic credentials' user on a route with basic authentication (the authorisation service tells Envoy), \"-\" elsewhere, where nginx would name the user of any Basic credentials sent. " +
				"A value with another variable is refused as a whole (a Warning on the ConfigMap naming each): ingress-nginx's default format is logged instead, and the ConfigMap's other keys apply. " +
				"ingress-nginx logs every request by default; ingress-xds when the ConfigMap sets this key, or under serve --nginx-defaults (then in ingress-nginx's default format). " +
				"disable-access-log turns it off; requests for unknown hosts are not logged (enable-access-log-for-default-backend)."},
		ignored("log-format-stream", "`[$remote_addr] [$time_local] ...`", "The access log of nginx's TCP/UDP proxying (its tcp-services and udp-services ConfigMaps), which ingress-xds does not serve: there is no such request to log."),
		ignored("enable-multi-accept", `"true"`, nginxProcess),
		ignored("max-worker-connections", "16384", nginxProcess),
		ignored("max-worker-open-files", "0", nginxProcess),
		ignored("map-hash-bucket-size", "64", nginxProcess),
		ignored("nginx-status-ipv4-whitelist", `"127.0.0.1"`, "nginx's status page, which Envoy has not (its admin interface is its own)."),
		ignored("nginx-status-ipv6-whitelist", `"::1"`, "nginx's status page, which Envoy has not (its admin interface is its own)."),
		{Name: "proxy-real-ip-cidr", NginxDefault: `"0.0.0.0/0"`, verdict: annotations.HonouredWithDifference, apply: proxyRealIPCIDR,
			Note: "With use-forwarded-headers or enable-real-ip: the peers (comma-separated addresses or CIDRs) whose X-Forwarded-For is trusted; the client is the header's rightmost address outside them, the leftmost when all are in, as nginx's real_ip_recursive (Envoy's X-Forwarded-For detection with xff_trusted_cidrs). Unset, ingress-xds trusts one proxy (as use-forwarded-headers says), not every peer as ingress-nginx's 0.0.0.0/0 does; serve --trusted-forwarded-hops, when set, wins."},
		{Name: "proxy-set-headers", NginxDefault: `""`, verdict: annotations.HonouredWithDifference, apply: headerMapKey(func(s *Settings) *types.NamespacedName { return &s.proxySetHeadersFrom }),
			Note: "The ConfigMap named (namespace/name, watched) gives the backend of every Ingress's paths its headers, as nginx.tmpl's proxy_set_header (grpc_set_header for GRPC) after its own: translated as a configuration-snippet's proxy_set_header (docs/snippets.md), so a header the template sets itself (X-Forwarded-For, X-Real-IP, ...) is sent a second time, an empty value removes the client's, and Upgrade and Connection change nothing. Host is refused, as nginx would send two. A header not translated whole leaves the whole ConfigMap unapplied, reported."},
		ignored("server-name-hash-max-size", "1024", nginxProcess),
		ignored("server-name-hash-bucket-size", "`<size of the processor's cache line>`", nginxProcess),
		ignored("proxy-headers-hash-max-size", "512", nginxProcess),
		ignored("proxy-headers-hash-bucket-size", "64", nginxProcess),
		ignored("reuse-port", `"true"`, nginxProcess),
		ignored("server-tokens", `"false"`, "Envoy answers with its own Server header (envoy), which names no version either way."),
		{Name: "ssl-ciphers", NginxDefault: `"ECDHE-ECDSA-AES128-GCM-SHA256:..."`, verdict: annotations.HonouredWithDifference, apply: sslCiphers,
			Note: "The TLS 1.2 cipher suites of the HTTPS listener, in order. Envoy takes BoringSSL's names, not OpenSSL's expressions: the names BoringSSL lacks (the DHE suites of ingress-nginx's default among them) are dropped and reported; a value with an alias or an exclusion (\"ALL:!aNULL\", \"HIGH\") is reported and Envoy's ciphers are used. TLS 1.3's suites are not configurable. An Ingress's ssl-ciphers annotation replaces it for the Ingress's hosts."},
		{Name: "ssl-ecdh-curve", NginxDefault: `"auto"`, verdict: annotations.HonouredWithDifference, apply: sslECDHCurve,
			Note: "The HTTPS listener's key exchange groups, colon-separated, in order (nginx's ssl_ecdh_curve, OpenSSL's names: X25519, prime256v1, secp384r1, secp521r1, X25519MLKEM768); auto: Envoy's. A group BoringSSL lacks (X448, the brainpool curves) is dropped and reported, the others kept."},
		ignored("ssl-dh-param", `""`, "Diffie-Hellman parameters serve the DHE cipher suites, which Envoy's BoringSSL does not have (ssl-ciphers drops them and reports it)."),
		{Name: "ssl-protocols", NginxDefault: `"TLSv1.2 TLSv1.3"`, verdict: annotations.HonouredWithDifference, apply: sslProtocols,
			Note: "The TLS versions of the HTTPS listener (TLSv1, TLSv1.1, TLSv1.2, TLSv1.3, space-separated): Envoy serves a range, from the lowest named to the highest, so a version between two named is served too (reported); SSLv2 and SSLv3 are not served (reported). A client offering only a version outside fails its handshake."},
		ignored("ssl-early-data", `"false"`, "Envoy's TLS over TCP takes no early data (TLS 1.3 0-RTT): a client that sends some has it refused by the handshake and sends its request once the handshake is done, one round trip later; nothing else changes."),
		{Name: "ssl-session-cache", NginxDefault: `"true"`, apply: sslSessionCache,
			Note: "false: the HTTPS listener resumes no TLS session by its ID (nginx's ssl_session_cache none); true: it does (Envoy's own cache, not a shared one of ssl-session-cache-size)."},
		ignored("ssl-session-cache-size", `"10m"`, nginxProcess),
		{Name: "ssl-session-tickets", NginxDefault: `"false"`, served: true, verdict: annotations.HonouredWithDifference, apply: sslSessionTickets,
			Note: "false: the HTTPS listener sends no session tickets, so a client resumes no TLS session by one, in TLS 1.2 and 1.3, as nginx's ssl_session_tickets off (whose keys would otherwise outlive the session and weaken forward secrecy); true: it sends them, with keys Envoy makes and rotates itself, unless ssl-session-ticket-key gives one. Unset: Envoy's, tickets sent, unless serve --nginx-defaults (on when serve takes over ingress-nginx's class) gives ingress-nginx's false."},
		{Name: "ssl-session-ticket-key", NginxDefault: "`<Randomly Generated>`", verdict: annotations.HonouredWithDifference, apply: sslSessionTicketKey,
			Note: "The key of the HTTPS listener's session tickets, base64 of 48 or 80 bytes as nginx takes it, unless ssl-session-tickets is false: every Envoy given it resumes the sessions of the others, where each otherwise makes keys of its own, and changing it makes every ticket issued before it fail to resume (a full handshake). Envoy's keys are 80 bytes: a 48-byte key is stretched to 80 by HKDF-SHA256, the same on every Envoy. Any other length, or text that is not base64, is reported and treated as unset. The key reaches Envoy over SDS, and inspection shows it redacted."},
		{Name: "ssl-session-timeout", NginxDefault: `"10m"`, served: true, apply: sslSessionTimeout,
			Note: "How long a TLS session may be resumed (\"10m\", nginx's time form), unless ssl-session-cache is false (nginx.tmpl writes it with the cache only). Unset: Envoy's, unless serve --nginx-defaults gives ingress-nginx's 10m."},
		ignored("ssl-buffer-size", `"4k"`, nginxProcess),
		{Name: "use-proxy-protocol", NginxDefault: `"false"`, verdict: annotations.HonouredWithDifference, apply: useProxyProtocol,
			Note: "true: both listeners take the PROXY protocol (v1 or v2) from the load balancer in front, and close a connection that does not open with its header, as nginx's listen ... proxy_protocol: the header's source address is the client's (X-Real-IP, X-Forwarded-For, source ranges, the access log), its destination port the backend's X-Forwarded-Port, and a connection to port 443 on the plain listener is one whose client used HTTPS (X-Forwarded-Proto https, no redirect to HTTPS), as lua_ingress.lua decides. With use-forwarded-headers, X-Forwarded-For is read past the header's address as without it. A proxy-real-ip-cidr that does not take every address names the peers whose connections are taken at all, where nginx would serve another peer's as from that peer."},
		{Name: "proxy-protocol-header-timeout", NginxDefault: `"5s"`, verdict: annotations.HonouredWithDifference, apply: proxyProtocolHeaderTimeout,
			Note: "With use-proxy-protocol: how long a listener waits for a connection's PROXY header (a Go duration, \"5s\"), then closes it (Envoy's listener_filters_timeout), on both listeners, and on the HTTPS one for the TLS ClientHello too, which Envoy's listener filters read under the same timeout. ingress-nginx bounds with it the ssl-passthrough port's header alone, nginx's own listeners waiting client-header-timeout. Unset: Envoy's 15 s."},
		ignored("enable-aio-write", `"true"`, nginxProcess),
		{Name: "use-gzip", NginxDefault: `"false"`, verdict: annotations.HonouredWithDifference, apply: useGzip, Note: gzipNote},
		ignored("use-geoip", `"true"`, removedNote),
		notYet("use-geoip2", `"false"`, ""),
		notYet("geoip2-autoreload-in-minutes", `"0"`, ""),
		{Name: "enable-brotli", NginxDefault: `"false"`, verdict: annotations.HonouredWithDifference, apply: enableBrotli,
			Note: "With enable-brotli, every response of every route is compressed with brotli for a client that accepts br, as nginx.tmpl's brotli at the http level with ngx_brotli ahead of gzip (Envoy's brotli compressor filter, chosen first): only 200, 403 and 404, a Content-Length under brotli-min-length and a response already encoded left alone, text/html always among the types, a strong ETag made weak. A response brotli leaves (its type, its length) may still be gzipped, as nginx's gzip takes it. The difference: ngx_brotli takes br whenever the client accepts it, while Envoy takes the encoding the client prefers, so a client that gives gzip a higher q-value than br gets gzip."},
		{Name: "brotli-level", NginxDefault: "4", apply: brotliLevel, Note: "brotli's quality, 0 to 11 (with enable-brotli)."},
		{Name: "brotli-min-length", NginxDefault: "20", apply: brotliMinLength, Note: "The smallest Content-Length compressed with brotli (with enable-brotli); a response without one is compressed."},
		{Name: "brotli-types", NginxDefault: `"application/xml+rss ..."`, apply: brotliTypes, Note: "The media types compressed with brotli (with enable-brotli), text/html always among them; * for every type."},
		{Name: "use-http2", NginxDefault: `"true"`, apply: useHTTP2,
			Note: "false: the HTTPS listener offers only http/1.1 in ALPN and speaks HTTP/1.1 only; true (the default): h2 and http/1.1."},
		{Name: "gzip-disable", NginxDefault: `""`, verdict: annotations.HonouredWithDifference, apply: gzipDisable,
			Note: "With use-gzip: the responses to a request whose User-Agent the regular expression matches, anywhere and in any case, are not gzip-compressed (nginx's gzip_disable, the whole value one expression, as nginx.tmpl writes it); msie6 is nginx's mask of Internet Explorer 4 to 6 (not 6 with SV1), which nginx checks at the first \"MSIE \" of the User-Agent alone. An expression RE2 does not read as PCRE does (lookarounds, backreferences) is reported and treated as unset. A snippet's gzip on inherits it, as a location inherits the http level's. Brotli is not affected, as ngx_brotli has no such directive."},
		{Name: "gzip-level", NginxDefault: "1", apply: gzipLevel, Note: "With use-gzip: gzip's compression level, 1 to 9."},
		{Name: "gzip-min-length", NginxDefault: "256", apply: gzipMinLength, Note: "With use-gzip: a response whose Content-Length is smaller is not compressed; one without Content-Length is."},
		{Name: "gzip-types", NginxDefault: `"application/atom+xml ..."`, nginxValue: nginxGzipTypes, apply: gzipTypes,
			Note: "With use-gzip: the media types compressed (space-separated; * for all), matched against the Content-Type without its parameters, in any case; text/html always, as nginx's gzip_types."},
		ignored("worker-processes", "`<Number of CPUs>`", nginxProcess),
		ignored("worker-cpu-affinity", `""`, nginxProcess),
		ignored("worker-shutdown-timeout", `"240s"`, "How long nginx's old workers drain after a reload; Envoy takes new configuration without a reload."),
		ignored("enable-serial-reloads", `"false"`, "nginx's reloads; Envoy takes new configuration without one."),
		annotation("load-balance", `"round_robin"`),
		ignored("variables-hash-bucket-size", "256", nginxProcess),
		ignored("variables-hash-max-size", "2048", nginxProcess),
		{Name: "upstream-keepalive-connections", NginxDefault: "320", verdict: annotations.HonouredWithDifference, apply: upstreamKeepaliveConnections,
			Note: "0: no keep-alive to backends, a connection per request (every cluster's max_requests_per_connection 1). Another number changes nothing: Envoy has no bound on the idle connections a pool keeps (nginx's per worker), each stays until upstream-keepalive-timeout."},
		{Name: "upstream-keepalive-time", NginxDefault: `"1h"`, verdict: annotations.HonouredWithDifference, apply: upstreamKeepaliveTime,
			Note: "How long a connection to a backend may live (nginx's time, \"1h\", \"75s\"), then Envoy closes it once idle (every cluster's max_connection_duration). Unset: no bound, not nginx's hour."},
		{Name: "upstream-keepalive-timeout", NginxDefault: "60", verdict: annotations.HonouredWithDifference, apply: upstreamKeepaliveTimeout,
			Note: "Seconds a connection to a backend may stay idle (every cluster's idle_timeout). Unset: Envoy's hour, not nginx's 60 s."},
		{Name: "upstream-keepalive-requests", NginxDefault: "10000", verdict: annotations.HonouredWithDifference, apply: upstreamKeepaliveRequests,
			Note: "Requests a connection to a backend carries, then Envoy closes it (every cluster's max_requests_per_connection). Unset: no bound, not nginx's 10000."},
		{Name: "limit-conn-zone-variable", NginxDefault: `"$binary_remote_addr"`, verdict: annotations.HonouredWithDifference, check: clientAddressVariable,
			Note: "What limit-connections, limit-rps and limit-rpm count by (nginx.tmpl's map of $limit_ID): the client's address, $binary_remote_addr or $remote_addr (the same address as text), as ingress-xds always counts. Another variable (a header, a cookie) is reported and the client's address counted."},
		ignored("proxy-stream-timeout", `"600s"`, streamNote),
		ignored("proxy-stream-next-upstream", `"true"`, streamNote),
		ignored("proxy-stream-next-upstream-timeout", `"600s"`, streamNote),
		ignored("proxy-stream-next-upstream-tries", "3", streamNote),
		ignored("proxy-stream-responses", "1", streamNote),
		ignored("bind-address", `""`, "The listeners' address is serve's --listen-address."),
		ignored("bind-address-ipv4", `""`, "The listeners' address is serve's --listen-address."),
		ignored("bind-address-ipv6", `""`, "The listeners' address is serve's --listen-address."),
		{Name: "use-forwarded-headers", NginxDefault: `"false"`, verdict: annotations.HonouredWithDifference, apply: useForwardedHeaders,
			Note: "true: one proxy in front of Envoy is trusted with X-Forwarded-For, as serve --trusted-forwarded-hops 1 (which, when set, wins): the client address that source ranges and rate limits see is the one that proxy appended. ingress-nginx, with its default proxy-real-ip-cidr 0.0.0.0/0, trusts every address of the header and takes the first, which the client chooses. The client's X-Forwarded-Host, X-Forwarded-Port and X-Forwarded-Proto then reach the backend as sent (each set from the request when absent), X-Forwarded-Scheme and X-Scheme are its X-Forwarded-Proto, as ingress-nginx's lua_ingress.lua, and a request whose X-Forwarded-Proto is not http is not redirected to HTTPS (ssl-redirect, force-ssl-redirect); false (and without a ConfigMap) they are the request's, whatever the client sent (docs/security.md). Unlike ingress-nginx, the backend's Host stays the request's, not the first X-Forwarded-Host, and X-Forwarded-Host is passed whole, a list included."},
		{Name: "enable-real-ip", NginxDefault: `"false"`, verdict: annotations.HonouredWithDifference, apply: enableRealIP,
			Note: "true: the client's address is read from forwarded-for-header past the proxies proxy-real-ip-cidr trusts, as with use-forwarded-headers (one proxy trusted when proxy-real-ip-cidr is unset); the other X-Forwarded-* headers are not trusted for it."},
		{Name: "forwarded-for-header", NginxDefault: `"X-Forwarded-For"`, verdict: annotations.HonouredWithDifference, apply: forwardedForHeader,
			Note: "With use-forwarded-headers or enable-real-ip, the header naming the client's address. Another header than X-Forwarded-For (\"CF-Connecting-IP\") is read by Envoy's custom header detection, as one address, from every peer: so only while proxy-real-ip-cidr is unset or holds 0.0.0.0/0; with narrower CIDRs it is reported and not trusted (the client is the peer). The backend's X-Forwarded-For is then the client's address (or, with compute-full-forwarded-for, the header as received)."},
		ignored("forwarded-for-proxy-protocol-header", `"X-Forwarded-For-Proxy-Protocol"`, "The name of a request header nginx.tmpl sets, under use-proxy-protocol and use-forwarded-headers together, for nginx's realip module to read the client's address from (real_ip_header takes no variable): ingress-xds reads the client's address as use-proxy-protocol's note says without one, and sends the backend no such header."),
		{Name: "forwarded-host-header", NginxDefault: `"X-Forwarded-Host"`, apply: forwardedHostHeader,
			Note: "The request header the backend's X-Original-Forwarded-Host copies as the client sent it (nginx.tmpl's buildForwardedHost)."},
		{Name: "compute-full-forwarded-for", NginxDefault: `"false"`, apply: computeFullForwardedFor,
			Note: "With use-forwarded-headers: the backend's X-Forwarded-For is the header as received with the peer's address appended; otherwise (and by default) it is the client's address alone. The backend gets X-Real-IP, the client's address, either way, and X-Original-Forwarded-For, the header as the client sent it, as from ingress-nginx, with or without a ConfigMap."},
		{Name: "proxy-add-original-uri-header", NginxDefault: `"false"`, verdict: annotations.HonouredWithDifference, apply: proxyAddOriginalURIHeader,
			Note: "true: the backend gets X-Original-URI, the request's path and query before any rewrite (rewrite-target's among them), the client's own replaced, as nginx.tmpl's proxy_set_header X-Original-URI $request_uri. Envoy's is the path as it routes it: repeated slashes merged and . and .. segments resolved, where nginx's $request_uri is the request line's as sent."},
		only("generate-request-id", `"true"`, "true",
			"Every request without an X-Request-ID gets one, as with true (docs/annotations.md); false is not honoured (reported, and treated as true)."),
		ignored("jaeger-collector-host", `""`, removedNote),
		ignored("jaeger-collector-port", "6831", removedNote),
		ignored("jaeger-endpoint", `""`, removedNote),
		ignored("jaeger-service-name", `"nginx"`, removedNote),
		ignored("jaeger-propagation-format", `"jaeger"`, removedNote),
		ignored("jaeger-sampler-type", `"const"`, removedNote),
		ignored("jaeger-sampler-param", `"1"`, removedNote),
		ignored("jaeger-sampler-host", `"http://127.0.0.1"`, removedNote),
		ignored("jaeger-sampler-port", "5778", removedNote),
		ignored("jaeger-trace-context-header-name", "uber-trace-id", removedNote),
		ignored("jaeger-debug-header", "uber-debug-id", removedNote),
		ignored("jaeger-baggage-header", "jaeger-baggage", removedNote),
		ignored("jaeger-trace-baggage-header-prefix", "uberctx-", removedNote),
		annotation("enable-opentelemetry", `"false"`),
		{Name: "opentelemetry-trust-incoming-span", NginxDefault: `"true"`, apply: trustIncomingSpan,
			Note: "false: a client's traceparent and tracestate are dropped before Envoy starts its span, so every request starts a trace; true: the client's trace is the parent. For both listeners (Envoy starts the span before routing: the annotation of the same name cannot apply per Ingress)."},
		annotation("opentelemetry-operation-name", `""`),
		ignored("opentelemetry-config", `"/etc/ingress-controller/telemetry/opentelemetry.toml"`, "nginx's OpenTelemetry module's own file; Envoy's tracer is configured from the keys here."),
		{Name: "otlp-collector-host", NginxDefault: `""`, apply: otlpCollectorHost,
			Note: "The OTLP/gRPC collector spans are sent to (an IP address, or a DNS name Envoy resolves); without it nothing is traced, whatever enable-opentelemetry says."},
		{Name: "otlp-collector-port", NginxDefault: "4317", apply: otlpCollectorPort, Note: "The collector's port."},
		ignored("otel-max-queuesize", "2048", "Envoy's tracer buffers its spans itself and sends them every 5 s, or once 5 are waiting."),
		ignored("otel-schedule-delay-millis", "5000", "As otel-max-queuesize."),
		ignored("otel-max-export-batch-size", "512", "As otel-max-queuesize."),
		{Name: "otel-service-name", NginxDefault: `"nginx"`, apply: otelServiceName, Note: "The spans' service.name."},
		{Name: "otel-sampler", NginxDefault: `"AlwaysOn"`, apply: otelSampler,
			Note: "AlwaysOn, AlwaysOff, or TraceIdRatioBased (otel-sampler-ratio of the traces, by their id): Envoy's samplers of the same names."},
		{Name: "otel-sampler-parent-based", NginxDefault: `"true"`, apply: otelSamplerParentBased,
			Note: "true: a request with a trusted trace context is sampled as its parent was, the others by otel-sampler (Envoy's parent-based sampler)."},
		{Name: "otel-sampler-ratio", NginxDefault: "0.01", apply: otelSamplerRatio, Note: "With TraceIdRatioBased: the share of traces sampled, from 0 to 1."},
		refuseIfSet("main-snippet", `""`, snippetNote),
		{Name: "http-snippet", NginxDefault: `""`, verdict: annotations.HonouredWithDifference, late: true, apply: httpSnippet,
			Note: "Declarations other configuration uses (limit_req_zone, limit_conn_zone, proxy_cache_path, map and split_clients of variables of its own) are of no effect, as declarations alone are in nginx: a directive that would use one is refused where it appears (docs/snippets.md). Anything else refuses every Ingress, its Warning naming the directive and its line."},
		{Name: "server-snippet", NginxDefault: `""`, verdict: annotations.HonouredWithDifference, late: true, apply: configSnippet(snippet.ServerContext),
			Note: "Translated as the server-snippet annotation is (docs/annotations.md), in every host's server, after the annotation's, but for error_page, refused here (whether it has an effect depends on every host's paths); a snippet not translated whole refuses every Ingress, its Warning naming the directive and its line."},
		refuseIfSet("stream-snippet", `""`, snippetNote),
		{Name: "location-snippet", NginxDefault: `""`, verdict: annotations.HonouredWithDifference, late: true, apply: configSnippet(snippet.LocationContext),
			Note: "Translated as the configuration-snippet annotation is (docs/annotations.md), in every location of the Ingresses' paths, after their configuration-snippet; a snippet not translated whole refuses every Ingress, its Warning naming the directive and its line."},
		annotation("custom-http-errors", "[]int{}"),
		servedDefault(annotation("proxy-body-size", `"1m"`)),
		servedDefault(annotation("proxy-connect-timeout", "5")),
		servedDefault(annotation("proxy-read-timeout", "60")),
		servedDefault(annotation("proxy-send-timeout", "60")),
		annotation("proxy-buffers-number", "4"),
		annotation("proxy-buffer-size", `"4k"`),
		annotation("proxy-busy-buffers-size", `""`),
		annotation("proxy-max-temp-file-size", `"1024m"`),
		annotation("proxy-cookie-path", `"off"`),
		annotation("proxy-cookie-domain", `"off"`),
		annotation("proxy-next-upstream", `"error timeout"`),
		annotation("proxy-next-upstream-timeout", "0"),
		annotation("proxy-next-upstream-tries", "3"),
		annotation("proxy-redirect-from", `"off"`),
		annotation("proxy-redirect-to", `"off"`),
		annotation("proxy-request-buffering", `"on"`),
		annotation("proxy-http-version", `"1.1"`),
		annotation("proxy-buffering", `"off"`),
		servedDefault(annotation("ssl-redirect", `"true"`)),
		annotation("force-ssl-redirect", `"false"`),
		annotation("denylist-source-range", "[]string{}"),
		annotation("whitelist-source-range", "[]string{}"),
		annotation("upstream-hash-by", `""`),
		annotation("upstream-hash-by-subset", `"false"`),
		annotation("upstream-hash-by-subset-size", "3"),
		annotation("use-port-in-redirects", `"false"`),
		annotation("preserve-trailing-slash", `"false"`),
		annotation("service-upstream", `"false"`),
		{Name: "skip-access-log-urls", NginxDefault: "[]string{}", apply: skipAccessLogURLs,
			Note: "Comma-separated request URIs (path and query, as sent: nginx's $request_uri) whose requests are not logged; one starting with ~ (~* in any case) is a regular expression found anywhere in the URI, as nginx's map reads its keys (RE2's syntax; one RE2 refuses is reported and left out). Envoy's CEL access log filter."},
		annotation("limit-rate", "0"),
		annotation("limit-rate-after", "0"),
		ignored("lua-shared-dicts", `""`, nginxProcess),
		{Name: "http-redirect-code", NginxDefault: "308", apply: redirectCode,
			Note: "The status of ssl-redirect's and force-ssl-redirect's redirect to HTTPS: 301, 302, 307 or 308 (ingress-nginx takes those)."},
		{Name: "limit-req-status-code", NginxDefault: "503", apply: limitReqStatus,
			Note: "The status of a request over limit-rps or limit-rpm (a 4xx or 5xx)."},
		{Name: "limit-conn-status-code", NginxDefault: "503", apply: limitConnStatus,
			Note: "The status of a request over limit-connections (a 4xx or 5xx)."},
		ignored("enable-syslog", `"false"`, nginxLogs),
		ignored("syslog-host", `""`, nginxLogs),
		ignored("syslog-port", "514", nginxLogs),
		{Name: "no-tls-redirect-locations", NginxDefault: `"/.well-known/acme-challenge"`, apply: noTLSRedirect,
			Note: "Ingress paths starting with one of these (comma-separated) are never redirected to HTTPS, by ssl-redirect or force-ssl-redirect, as ingress-nginx decides it per location: with serve --configmap or --nginx-defaults, an ACME HTTP-01 challenge's path is served over plain HTTP unless the key says otherwise; without either, ingress-xds exempts none."},
		{Name: "global-allowed-response-headers", NginxDefault: `""`, apply: allowedResponseHeaders,
			Note: "The header names (comma-separated: letters, digits, \"-\" and \"_\") the custom-headers annotation may set, as in ingress-nginx; serve --global-allowed-response-headers names more. A name that is not valid is reported and left out, the others kept."},
		globalAuthKey("global-auth-url", `""`, "An external authentication of every Ingress without its own auth-url, as ingress-nginx puts it in every such location: the same check as that annotation's (docs/annotations.md), through the authorisation service beside Envoy. An Ingress with enable-global-auth \"false\" is left out, and so are its paths starting with one of no-auth-locations. A value that does not parse (or one of the keys below) refuses every Ingress (its paths answer 503), where ingress-nginx would drop the global authentication."),
		globalAuthKey("global-auth-method", `""`, "With global-auth-url: as auth-method."),
		globalAuthKey("global-auth-signin", `""`, "With global-auth-url: as auth-signin."),
		globalAuthKey("global-auth-signin-redirect-param", `"rd"`, "With global-auth-url: as auth-signin-redirect-param."),
		globalAuthKey("global-auth-response-headers", `""`, "With global-auth-url: as auth-response-headers."),
		globalAuthKey("global-auth-request-redirect", `""`, "With global-auth-url: as auth-request-redirect."),
		refuseIfSet("global-auth-snippet", `""`, snippetNote),
		globalAuthKey("global-auth-cache-key", `""`, "With global-auth-url: as auth-cache-key."),
		globalAuthKey("global-auth-cache-duration", `"200 202 401 5m"`, "With global-auth-url: as auth-cache-duration."),
		globalAuthKey("global-auth-always-set-cookie", `"false"`, "With global-auth-url: as auth-always-set-cookie."),
		{Name: "no-auth-locations", NginxDefault: `"/.well-known/acme-challenge"`, verdict: annotations.HonouredWithDifference, apply: noAuthLocations,
			Note: "Ingress paths starting with one of these (comma-separated) are left out of global-auth-url's authentication, as ingress-nginx decides it per location by the path the Ingress writes. ingress-nginx also leaves them out of an Ingress's own auth-url and basic authentication; ingress-xds keeps those (stricter)."},
		{Name: "block-cidrs", NginxDefault: `""`, verdict: annotations.HonouredWithDifference, apply: blockCIDRs,
			Note: "Clients in these ranges (comma-separated addresses or CIDRs) get 403 on every path of every host. nginx's ranges of a location replace its http-level ones, so an Ingress with its own allowlist-source-range or denylist-source-range lets them in there; here they are refused everywhere. A value that does not parse refuses every Ingress (its paths answer 503) until it does: an access control fails closed."},
		{Name: "block-user-agents", NginxDefault: `""`, verdict: annotations.HonouredWithDifference, apply: block,
			Note: "Requests whose User-Agent matches one of these (comma-separated nginx map keys: a string matched whole, ignoring case, \"\" for none; ~ a case-sensitive regular expression searched for in it, ~* a case-insensitive one) get 403 on every host and path, before anything else, as ingress-nginx's map and return 403 in every server. Expressions are RE2's: one RE2 cannot take (PCRE's look-arounds, backreferences) refuses every Ingress (its paths answer 503) until it is fixed: an access control fails closed."},
		{Name: "block-referers", NginxDefault: `""`, verdict: annotations.HonouredWithDifference, apply: block,
			Note: "As block-user-agents, of the Referer header (\"\" blocks requests without one)."},
		only("proxy-ssl-location-only", `"false"`, "true", "ingress-xds applies an Ingress's proxy-ssl-* annotations to its own paths alone, what true asks. false (the default), where ingress-nginx also writes the first such Ingress's at its host's server level, so that the host's other Ingresses that set none verify and present the same certificates to an HTTPS backend (controller.go, server.ProxySSL), is not honoured: reported when set, and those other Ingresses' paths verify nothing."),
		{Name: "default-type", NginxDefault: `"text/html"`, apply: defaultType,
			Note: "The Content-Type of the text a snippet's return answers with (nginx's default_type), in the Ingresses' snippets and the ConfigMap's. Envoy's own answers keep theirs."},
		only("ssl-reject-handshake", `"false"`, "true", "ingress-xds serves no default certificate, so a TLS handshake whose SNI names no host with a certificate (or that names none) is refused, whatever the key: what true asks (nginx.tmpl's ssl_reject_handshake on in the default server). false, where ingress-nginx answers such a handshake with its default certificate, is not honoured (reported)."),
		ignored("debug-connections", `""`, nginxLogs),
		ignored("strict-validate-path-type", `"true"`, "ingress-nginx checks it in its admission webhook alone (controller.go CheckIngress, refusing to admit an Exact or Prefix path of other than letters, digits and ._-/), and serves such a path already stored; ingress-xds has no admission webhook and serves it as written, as ingress-nginx serves one already stored."),
		ignored("grpc-buffer-size-kb", "0", nginxProcess),
		{Name: "relative-redirects", NginxDefault: "false", verdict: annotations.Honoured, apply: relativeRedirects,
			Note: "true: every permanent-redirect and temporal-redirect to a path (\"/new\") is sent as it is, as if each Ingress set relative-redirects \"true\" (nginx.tmpl's absolute_redirect off at the http level, which an Ingress's \"false\" does not undo), and so is every snippet's return or rewrite to a path, the server-snippet's included (docs/snippets.md)."},
		annotation("disable-proxy-intercept-errors", `"false"`),
	}
}

// servedDefault marks k's default as one serve --nginx-defaults gives
// every Ingress (NginxDefaults).
func servedDefault(k Key) Key {
	k.served = true
	return k
}

func annotation(name, nginxDefault string) Key {
	return Key{Name: name, NginxDefault: nginxDefault, Annotation: name}
}

func notYet(name, nginxDefault, note string) Key {
	return Key{Name: name, NginxDefault: nginxDefault, verdict: annotations.NotYet, Note: note}
}

func ignored(name, nginxDefault, note string) Key {
	return Key{Name: name, NginxDefault: nginxDefault, verdict: annotations.Ignored, Note: note}
}

// only is a key of which ingress-xds does one value: the others are
// reported and treated as unset.
func only(name, nginxDefault, value, note string) Key {
	return Key{Name: name, NginxDefault: nginxDefault, verdict: annotations.HonouredWithDifference, Note: note,
		check: func(s string) error {
			if strings.TrimSpace(s) != value {
				return fmt.Errorf("only %s is honoured", value)
			}
			return nil
		}}
}

// clientAddressVariable checks limit-conn-zone-variable: the client's
// address, as binary or as text.
func clientAddressVariable(value string) error {
	switch strings.TrimSpace(value) {
	case "$binary_remote_addr", "$remote_addr":
		return nil
	}
	return fmt.Errorf("only the client's address ($binary_remote_addr, $remote_addr) is honoured: the client's address is counted")
}

// refuseIfSet is an access control ingress-xds does not apply: any value
// but an empty one refuses every Ingress.
func refuseIfSet(name, nginxDefault, note string) Key {
	return Key{Name: name, NginxDefault: nginxDefault, verdict: annotations.Refused, Note: note,
		refuses: func(s string) bool { return strings.TrimSpace(s) != "" }}
}

// globalAuthKey is a global-auth-* key, read as the auth-* annotation it
// stands for (globalauth.go).
func globalAuthKey(name, nginxDefault, note string) Key {
	return Key{Name: name, NginxDefault: nginxDefault, verdict: annotations.HonouredWithDifference, apply: globalAuth, Note: note}
}

// refuseIfTrue is refuseIfSet for a switch: any value but false refuses
// (one that does not parse as well: fail closed).
func refuseIfTrue(name, nginxDefault, note string) Key {
	return Key{Name: name, NginxDefault: nginxDefault, verdict: annotations.Refused, Note: note,
		refuses: func(s string) bool {
			on, err := strconv.ParseBool(strings.TrimSpace(s))
			return err != nil || on
		}}
}

// blockCIDRs reads block-cidrs as denylist-source-range is read.
func blockCIDRs(t *Table, s *Settings, name, value string) error {
	parsed, err := annotations.DenylistSourceRange.Parse(value)
	if err != nil {
		s.Defaults.RefuseAll(name, name+" does not parse")
		return fmt.Errorf("%v: every Ingress is refused until it parses", err)
	}
	s.BlockCIDRs = parsed
	return nil
}

func limitReqStatus(_ *Table, s *Settings, _, value string) error {
	n, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil || n < 400 || n > 599 {
		return fmt.Errorf("not a status from 400 to 599: treated as unset (503)")
	}
	s.LimitReqStatus = n
	return nil
}

func limitConnStatus(_ *Table, s *Settings, _, value string) error {
	n, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil || n < 400 || n > 599 {
		return fmt.Errorf("not a status from 400 to 599: treated as unset (503)")
	}
	s.LimitConnStatus = n
	return nil
}

func redirectCode(_ *Table, s *Settings, _, value string) error {
	n, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil || (n != 301 && n != 302 && n != 307 && n != 308) {
		return fmt.Errorf("not one of 301, 302, 307, 308: treated as unset (308)")
	}
	s.HTTPRedirectCode = n
	return nil
}

func hsts(_ *Table, s *Settings, _, value string) error {
	on, err := strconv.ParseBool(strings.TrimSpace(value))
	if err != nil {
		return fmt.Errorf("not true or false: treated as unset (no HSTS)")
	}
	s.hsts.on = on
	return nil
}

func hstsSubdomains(_ *Table, s *Settings, _, value string) error {
	on, err := strconv.ParseBool(strings.TrimSpace(value))
	if err != nil {
		return fmt.Errorf("not true or false: treated as unset (true)")
	}
	s.hsts.noSubdomains = !on
	return nil
}

func hstsPreload(_ *Table, s *Settings, _, value string) error {
	on, err := strconv.ParseBool(strings.TrimSpace(value))
	if err != nil {
		return fmt.Errorf("not true or false: treated as unset (false)")
	}
	s.hsts.preload = on
	return nil
}

func hstsMaxAge(_ *Table, s *Settings, _, value string) error {
	n, err := strconv.ParseUint(strings.TrimSpace(value), 10, 32)
	if err != nil {
		return fmt.Errorf("not a number of seconds: treated as unset (31536000)")
	}
	s.hsts.maxAge = strconv.FormatUint(n, 10)
	return nil
}

// hstsKeys are the hsts keys read, until Parse makes the header of them.
type hstsKeys struct {
	on, noSubdomains, preload bool
	maxAge                    string
}

// header is the Strict-Transport-Security value, as ingress-nginx writes
// it; empty without hsts.
func (h hstsKeys) header() string {
	if !h.on {
		return ""
	}
	v := "max-age=" + cmp.Or(h.maxAge, "31536000")
	if !h.noSubdomains {
		v += "; includeSubDomains"
	}
	if h.preload {
		v += "; preload"
	}
	return v
}

func useForwardedHeaders(_ *Table, s *Settings, _, value string) error {
	on, err := strconv.ParseBool(strings.TrimSpace(value))
	if err != nil {
		return fmt.Errorf("not true or false: treated as unset (false)")
	}
	if on {
		s.TrustedHops = 1
	}
	return nil
}

func isBool(s string) error {
	_, err := strconv.ParseBool(strings.TrimSpace(s))
	return err
}
