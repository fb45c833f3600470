package ir

import (
	"errors"
	"fmt"
	"strings"
)

// What Validate finds wrong, one sentinel per kind of violation. Each error
// Validate joins is a *ValidationError that errors.Is matches against one
// of these, and errors.As reads for the object and field at fault.
var (
	// ErrUnsorted: a list out of its order (by name, by port, a
	// backend's clusters apart).
	ErrUnsorted = errors.New("not sorted")
	// ErrDuplicate: a name listed twice, a port used twice, an alias
	// given twice.
	ErrDuplicate = errors.New("listed twice")
	// ErrUnlistedCluster: a route, mirror, passthrough or aggregate
	// names a cluster that is not in IR.Clusters.
	ErrUnlistedCluster = errors.New("unlisted cluster")
	// ErrUnlistedBackend: a cluster of a backend not in IR.Backends.
	ErrUnlistedBackend = errors.New("unlisted backend")
	// ErrUnlistedCertificate: a virtual host's certificate not in
	// IR.Certificates.
	ErrUnlistedCertificate = errors.New("unlisted certificate")
	// ErrClusterName: a cluster not named as ClusterName or
	// AggregateClusterName names it.
	ErrClusterName = errors.New("cluster misnamed")
	// ErrAggregate: an aggregate cluster that is not two clusters or
	// more, none an aggregate, the first of its own backend, no policy.
	ErrAggregate = errors.New("bad aggregate cluster")
	// ErrBadAction: a route without exactly one action, a forward to no
	// cluster, a split without weights.
	ErrBadAction = errors.New("bad action")
	// ErrOutOfRange: a port, status, code, percent, bound or key length
	// outside what it may be.
	ErrOutOfRange = errors.New("out of range")
	// ErrUnknownValue: an enumerated field with a value it does not have.
	ErrUnknownValue = errors.New("unknown value")
	// ErrBadAddress: an IP address or CIDR that does not parse, or is
	// not canonical.
	ErrBadAddress = errors.New("bad address")
	// ErrBadHost: a host name, alias, SNI or redirect host, or a name
	// a certificate is verified by (a subject alt name).
	ErrBadHost = errors.New("bad host")
	// ErrBadPath: a path, prefix or URL that is not absolute or holds
	// what it may not.
	ErrBadPath = errors.New("bad path")
	// ErrBadHeader: a header name that is no token, or a header value
	// with control characters (a response splitting), or with what Envoy
	// would read as a command.
	ErrBadHeader = errors.New("bad header")
	// ErrBadCipher: a TLS cipher suite name Envoy cannot take.
	ErrBadCipher = errors.New("bad cipher")
	// ErrBadCertificate: PEM that is not certificates Envoy can load (a
	// client-certificate CA bundle).
	ErrBadCertificate = errors.New("bad certificate")
	// ErrBadName: a name the IR gives (a connection limit's zone, a query
	// parameter, a retry condition or method, a hash's cookie or
	// parameter, external auth's signin parameter, a body substitution's
	// media type) that is empty or holds what it may not.
	ErrBadName = errors.New("bad name")
	// ErrBadRegex: a regular expression RE2 refuses, or too long.
	ErrBadRegex = errors.New("bad regex")
	// ErrConflict: fields set together that exclude each other, or one
	// set without the one it needs.
	ErrConflict = errors.New("conflicting fields")
	// ErrNoOp: a value that changes nothing where nil says that.
	ErrNoOp = errors.New("no-op value")
	// ErrBadContent: content the IR carries as it is (a user file, a body
	// substitution's texts) that holds what Envoy's configuration cannot
	// (a NUL) or what the renderer relies on it not holding.
	ErrBadContent = errors.New("bad content")
	// ErrBadFormat: an access log format Envoy cannot take as it is.
	ErrBadFormat = errors.New("bad format")
	// ErrBadValue: any other value a field may not have; Field says
	// which. Every check of Validate has a sentinel of its own above:
	// this one is what a validator's error that is not a
	// *ValidationError becomes (none is now).
	ErrBadValue = errors.New("bad value")
)

// Kind is the kind of object a ValidationError is about.
type Kind string

const (
	KindListener    Kind = "listener"
	KindVirtualHost Kind = "virtual host"
	// KindRoute is a route: Name is its virtual host's, Route its index.
	KindRoute       Kind = "route"
	KindCluster     Kind = "cluster"
	KindBackend     Kind = "backend"
	KindCertificate Kind = "certificate"
)

// ValidationError is one violation of the IR's contract that Validate
// found.
type ValidationError struct {
	Kind Kind
	// Name is the object's: a listener's, cluster's, backend's or
	// certificate's name, a virtual host's (and a route's) host.
	Name string
	// Route is a route's index in its virtual host (KindRoute only).
	Route int
	// Field is the path of the field at fault from the object, with Go's
	// field names: "Port", "Action.Forward.Clusters[0].Cluster",
	// "Policy.ErrorPages.Headers[1]". Empty for the object as a whole
	// (its place in its list).
	Field string
	// Err is what is wrong: one of the Err sentinels above.
	Err error

	msg   string
	cause error // what a check underneath said, if any (a regexp's error)
}

// Error reads as the object, then what is wrong with it:
//
//	virtual host "a.example.com" route 0: cluster "nope" is not listed
func (e *ValidationError) Error() string {
	var b strings.Builder
	switch e.Kind {
	case KindVirtualHost:
		fmt.Fprintf(&b, "virtual host %q", e.Name)
	case KindRoute:
		fmt.Fprintf(&b, "virtual host %q route %d", e.Name, e.Route)
	default:
		fmt.Fprintf(&b, "%s %s", e.Kind, e.Name)
	}
	b.WriteString(": ")
	b.WriteString(e.msg)
	return b.String()
}

// Unwrap gives the sentinel, and what a check underneath said.
func (e *ValidationError) Unwrap() []error {
	if e.cause != nil {
		return []error{e.Err, e.cause}
	}
	return []error{e.Err}
}

// invalid is a violation of a field, its object to be filled in by the
// caller that knows it.
// A %w in format makes its error the cause.
func invalid(field string, kind error, format string, args ...any) *ValidationError {
	err := fmt.Errorf(format, args...)
	return &ValidationError{Field: field, Err: kind, msg: err.Error(), cause: errors.Unwrap(err)}
}

// violations collects one object's.
type violations []*ValidationError

func (v *violations) add(field string, kind error, format string, args ...any) {
	*v = append(*v, invalid(field, kind, format, args...))
}

// nest takes what a validator of a part of the object (at field) found:
// its ValidationErrors with their fields under field, any other error as
// one of kind. prefix leads each message ("cors: ").
func (v *violations) nest(field, prefix string, kind error, errs ...error) {
	for _, err := range errs {
		if err == nil {
			continue
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			if _, self := err.(*ValidationError); !self {
				v.nest(field, prefix, kind, j.Unwrap()...)
				continue
			}
		}
		if ve, ok := err.(*ValidationError); ok {
			c := *ve
			c.Field = joinField(field, ve.Field)
			c.msg = prefix + ve.msg
			*v = append(*v, &c)
			continue
		}
		*v = append(*v, &ValidationError{Field: field, Err: kind, msg: prefix + err.Error(), cause: err})
	}
}

// errors returns the violations as a list of errors.
func (v violations) errors() []error {
	errs := make([]error, len(v))
	for i, e := range v {
		errs[i] = e
	}
	return errs
}

// join returns the violations joined, or nil if there are none.
func (v violations) join() error { return errors.Join(v.errors()...) }

// of gives every violation collected its object, and appends them to errs.
func (v violations) of(errs []error, kind Kind, name string, route int) []error {
	for _, e := range v {
		e.Kind, e.Name, e.Route = kind, name, route
		errs = append(errs, e)
	}
	return errs
}

func joinField(outer, inner string) string {
	switch {
	case outer == "":
		return inner
	case inner == "" || strings.HasPrefix(inner, "["):
		return outer + inner
	}
	return outer + "." + inner
}
