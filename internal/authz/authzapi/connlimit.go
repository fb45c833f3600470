package authzapi

// The connection limit (limit-connections) is the service's ext_proc
// server: Envoy opens one stream per request on a route with the limit,
// with these gRPC metadata keys (ExtProcPerRoute.overrides.
// grpc_initial_metadata), and the client's address as the attribute
// AttrSourceAddress of the stream's first message. The service counts the
// open streams per zone and address; a request over ConnMax is answered
// with ConnStatus.
const (
	// ConnMax is how many requests a client may have in flight, a
	// decimal number from 1.
	ConnMax = "ingress-xds-conn-max"
	// ConnZone names the count (the Ingress's namespace/name): routes of
	// the same zone share it.
	ConnZone = "ingress-xds-conn-zone"
	// ConnExempt are comma-separated CIDRs whose clients are never
	// counted; absent or empty: none.
	ConnExempt = "ingress-xds-conn-exempt"
	// ConnStatus is the status of a refused request, 400 to 599.
	ConnStatus = "ingress-xds-conn-status"
)

// AttrSourceAddress is the Envoy attribute of the client's address and
// port, the one the connection manager settled on (the peer, or the
// trusted X-Forwarded-For hop), and ExtProcAttributes the key of the
// attributes in a ProcessingRequest (the ext_proc filter's name).
const (
	AttrSourceAddress = "source.address"
	ExtProcAttributes = "envoy.filters.http.ext_proc"
)
