// Package authzapi is the whole contract between the control plane, which
// renders a route's ext_authz configuration, and the authorisation service
// (`ingress-xds authz`, package authz), which reads it back from each
// CheckRequest: the names of the context extensions
// (ExtAuthzPerRoute.check_settings.context_extensions) and their values.
// Nothing else crosses between them, so the package imports nothing.
package authzapi

// KeyKind names what the service checks for a route: one kind, or several
// separated by commas, checked in that order, all of which must allow the
// request (nginx's default "satisfy all" when a location has both basic and
// external authentication).
const KeyKind = "ingress-xds.io/kind"

// KeySatisfy, "any", lets a request in when one of the kinds, or the
// address check, does (nginx's satisfy any); absent, every kind must.
const KeySatisfy = "ingress-xds.io/satisfy"

// SatisfyAny is KeySatisfy's one value.
const SatisfyAny = "any"

// The address check of satisfy any: the client's address (the one Envoy
// gives the check, X-Forwarded-For's as the listener trusts it) is refused
// when in AddressDeny, then let in when in AddressAllow; in neither, the
// check has no say (nginx's allow and deny matching no rule). Each is
// comma-separated CIDRs.
const (
	AddressAllow = "ingress-xds.io/address.allow"
	AddressDeny  = "ingress-xds.io/address.deny"
)

// The kinds.
const (
	KindBasic    = "basic"
	KindExternal = "external"
)

// Basic authentication's keys.
const (
	// BasicRealm is the realm of the WWW-Authenticate challenge.
	BasicRealm = "ingress-xds.io/basic.realm"
	// BasicUsers is the user file in htpasswd form: one "user:hash" a
	// line. The hashes are those of the Secret, which Envoy holds already.
	BasicUsers = "ingress-xds.io/basic.users"
)

// What the service tells Envoy of a request it checked, as the ext_authz
// filter's dynamic metadata (in its namespace, MetadataNamespace), for
// the access log: RemoteUser is the user of the request's Basic
// credentials, checked or not (nginx's $remote_user).
const (
	MetadataNamespace = "envoy.filters.http.ext_authz"
	RemoteUser        = "remote_user"
)

// The password hash schemes the service verifies, by their prefix in an
// htpasswd line: those nginx's auth_basic verifies (its own $apr1$, {PLAIN},
// {SHA} and {SSHA}, and what the C library's crypt() of ingress-nginx's
// image verifies: MD5-crypt, SHA-256-crypt, SHA-512-crypt and bcrypt).
// Its DES crypt has no prefix (or "_", BSDi's): DESCrypt recognises it.
var hashPrefixes = [...]string{"$apr1$", "$1$", "$5$", "$6$", "$2a$", "$2b$", "$2y$", "{PLAIN}", "{SHA}", "{SSHA}"}

// SupportedHash says whether the service can verify a password against
// the hash, so that the control plane reports a line no password could
// match (a hash of another scheme, or no hash) on its Ingress.
func SupportedHash(hash string) bool {
	if DESCrypt(hash) {
		return true
	}
	for _, p := range hashPrefixes {
		if len(hash) > len(p) && hash[:len(p)] == p {
			return true
		}
	}
	return false
}

// DESCrypt says whether a hash is one DES crypt(3) can produce, which
// nginx's crypt() verifies. Traditional: 13 bytes, 2 of salt and 11 of
// crypt's alphabet ./0-9A-Za-z. The salt is of that alphabet when a tool
// made the hash, but musl's crypt(), ingress-nginx's (its image is
// Alpine's), takes any byte there but NUL, a line end or ":" (which end
// the field in nginx's reading of the file). BSDi's extended: 20
// characters of the alphabet after "_" (4 of iteration count, not zero, 4
// of salt, 11 of result). In both the last character's two low bits are
// zero: it holds the final 4 bits of 64. No prefixed scheme's hash is one:
// "$" and "{" are not of the alphabet, and every prefix has one of them
// after its second byte. A string that is not one matches no password
// under DES crypt either.
func DESCrypt(hash string) bool {
	var from int
	switch {
	case len(hash) == 20 && hash[0] == '_':
		if hash[1:5] == "...." {
			return false // a count of zero, which the C libraries refuse
		}
		from = 1
	case len(hash) == 13 && hash[0] != '_':
		for i := range 2 {
			switch hash[i] {
			case 0, '\n', '\r', ':':
				return false
			}
		}
		from = 2
	default:
		return false
	}
	for i := from; i < len(hash); i++ {
		if cryptIndex(hash[i]) < 0 {
			return false
		}
	}
	return cryptIndex(hash[len(hash)-1])&3 == 0
}

// cryptIndex is a character's value in crypt's alphabet, or -1.
func cryptIndex(c byte) int {
	switch {
	case c >= '.' && c <= '9':
		return int(c - '.')
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 12
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 38
	}
	return -1
}
