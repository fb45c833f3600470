package annotations

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ingress-nginx's basic authentication (its BasicDigestAuth group): nginx's
// auth_basic against the user file of a Secret. Envoy asks the
// authorisation service beside it (ingress-xds authz, internal/authz),
// which verifies the hashes nginx does (DES crypt included); Envoy's own
// basic_auth filter verifies SHA-1 alone.

// AuthType turns basic authentication on.
var AuthType = key[string](&definition{
	name:  "auth-type",
	under: Nginx,
	scope: ScopeRoute,
	doc: `"basic": every path of the Ingress asks for a user and password of auth-secret's user file: without them, or with wrong ones, ` +
		`the answer is 401 with WWW-Authenticate: Basic realm="<auth-realm>" and nginx's page; with them the request reaches the backend ` +
		`without its Authorization header, as ingress-nginx clears it. "digest" refuses the Ingress (not served).`,
	verdict: HonouredWithDifference,
	note: `The authorisation service beside each Envoy, in its pod (ingress-xds authz, asked over ext_authz on loopback), verifies the ` +
		`passwords: Envoy's own basic_auth filter verifies SHA-1 hashes only, and the control plane is never on the request path ` +
		`(docs/ARCHITECTURE.md, "The authorisation service"). Without the service the paths answer 500, never the backend. It verifies ` +
		`bcrypt ($2y$, $2a$, $2b$; successful verifications cached for a minute), Apache MD5 ($apr1$), ` +
		`MD5-crypt ($1$), SHA-256-crypt and SHA-512-crypt ($5$, $6$), traditional DES crypt (13 characters, no prefix: only the first 8 ` +
		`bytes of the password count, as in nginx's crypt(); salts as musl's, the C library of ingress-nginx's image, takes them), BSDi's ` +
		`extended DES crypt (_, 20 characters), {SHA}, {SSHA} and {PLAIN} hashes; as in nginx, a NUL ends a password and an empty user ` +
		`name is no credentials. A user without a hash, or with one of another scheme (bcrypt's $2x$, which musl verifies, among them), ` +
		`cannot log in and is reported; a user file holding bytes that are not UTF-8 answers 503 (reported), as it cannot travel in the ` +
		`configuration. Digest authentication cannot be done ` +
		`by Envoy or the service as nginx does it: an Ingress asking for it is refused. Without auth-type, auth-secret does nothing, as in ` +
		`ingress-nginx (reported).`,
}, parseOneOf("basic", "digest"))

// AuthSecret names the Secret of the user file.
var AuthSecret = key[string](&definition{
	name:   "auth-secret",
	under:  Nginx,
	scope:  ScopeRoute,
	refers: KindSecret,
	doc: `The Secret of the users: "name", or "namespace/name" of the Ingress's own namespace. A Secret of another namespace, one that ` +
		`does not exist, or one without the key auth-secret-type asks for makes every path of the Ingress answer 503, as ingress-nginx ` +
		`denies the location.`,
	verdict: HonouredWithDifference,
	note: `The user file travels, as the Secret holds it (hashes, never passwords), in each route's configuration to Envoy and to the ` +
		`service, which reads it from each check; the control plane is not on the request path. A changed Secret takes effect with the ` +
		`next configuration, within a second.`,
}, parseSecretName)

// AuthSecretType says how the Secret holds the users.
var AuthSecretType = key[string](&definition{
	name:  "auth-secret-type",
	under: Nginx,
	scope: ScopeRoute,
	doc: `"auth-file" (the default): the Secret's key auth is an htpasswd file ("user:hash" lines). "auth-map": each key of the Secret ` +
		`is a user, its value the hash.`,
}, parseOneOf("auth-file", "auth-map"))

// AuthRealm is the realm of the challenge.
var AuthRealm = key[string](&definition{
	name:  "auth-realm",
	under: Nginx,
	scope: ScopeRoute,
	doc:   `The realm of the WWW-Authenticate challenge (empty when unset), of the characters ingress-nginx admits: letters, digits, spaces and -._~/:.`,
}, parseRealm)

// realmChars are the characters ingress-nginx's validator admits in a
// realm (its CharsWithSpace).
var realmChars = regexp.MustCompile(`^[/\-._~a-zA-Z0-9: ]*$`)

func parseRealm(s string) (string, error) {
	if !realmChars.MatchString(s) {
		return "", fmt.Errorf("a realm holds only letters, digits, spaces and -._~/:")
	}
	return s, nil
}

// parseSecretName reads "name" or "namespace/name": ingress-nginx looks a
// name alone up in the Ingress's namespace.
func parseSecretName(s string) (string, error) {
	s = strings.TrimSpace(s)
	ns, name, found := strings.Cut(s, "/")
	if !found {
		ns, name = "", s
	}
	if (found && len(validation.IsDNS1123Label(ns)) > 0) || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return "", fmt.Errorf(`not a Secret's "name" or "namespace/name"`)
	}
	return s, nil
}

// basicAuthKeys lists the keys of this file, for table.
func basicAuthKeys() []*definition {
	return []*definition{AuthType.def, AuthSecret.def, AuthSecretType.def, AuthRealm.def}
}
