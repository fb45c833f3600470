package ingress

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// basicAuthConfig is what the basic authentication keys ask: the check
// (nil: none), or why the routes answer 503 (denied).
type basicAuthConfig struct {
	basic  *ir.BasicAuth
	denied string
}

// parseBasicAuth reads ingress-nginx's basic authentication (auth-type,
// auth-secret, auth-secret-type, auth-realm), as ingress-nginx's auth
// annotation parser does: what it denies (a Secret that cannot be read or
// used) makes every path answer 503 here too; what it ignores
// (auth-secret without auth-type) is ignored, and reported.
func parseBasicAuth(values *annotations.Values, env groupEnv) (basicAuthConfig, []problem) {
	authType, ok := annotations.AuthType.Get(values)
	if !ok {
		// A value that does not parse refused the Ingress already (the
		// registry: auth-type guards access).
		if _, secret := annotations.AuthSecret.Get(values); secret && !annotations.AuthType.Invalid(values) {
			return basicAuthConfig{}, []problem{problemf("InvalidAnnotation", "annotation %s is set without %s: the paths are served without authentication, as ingress-nginx serves them",
				annotations.AuthSecret.Name(), annotations.AuthType.Name())}
		}
		return basicAuthConfig{}, nil
	}
	if authType == "digest" {
		return basicAuthConfig{}, []problem{refusal(annotations.AuthType.Name(), "digest authentication is not supported (neither Envoy nor the authorisation service beside it does nginx's auth_digest)")}
	}
	users, denied, problems := basicAuthUsers(values, env)
	if denied != "" {
		return basicAuthConfig{denied: denied}, problems
	}
	realm, _ := annotations.AuthRealm.Get(values)
	return basicAuthConfig{basic: &ir.BasicAuth{Realm: realm, Users: users}}, problems
}

// basicAuthUsers reads the user file of auth-secret, or why the paths are
// denied (the reason reported) when there is none to use.
func basicAuthUsers(values *annotations.Values, env groupEnv) (string, string, []problem) {
	key := annotations.AuthSecret.Name()
	deny := func(format string, args ...any) (string, string, []problem) {
		return "", "basic authentication without users", []problem{problemf("InvalidAnnotation",
			"annotation %s: "+format+": the Ingress's paths answer 503, as ingress-nginx denies them", append([]any{key}, args...)...)}
	}
	raw, ok := annotations.AuthSecret.Get(values)
	if !ok {
		if annotations.AuthSecret.Invalid(values) {
			// Reported by the registry, which refused the Ingress.
			return "", "auth-secret unparsable", nil
		}
		return deny("%s=basic names no Secret", annotations.AuthType.Name())
	}
	ns, name, found := strings.Cut(raw, "/")
	if !found {
		ns, name = env.ing.Namespace, raw
	}
	if ns != env.ing.Namespace {
		// ingress-nginx's allow-cross-namespace-resources is off by
		// default: it denies the location.
		return deny("%q is a Secret of another namespace than the Ingress's", raw)
	}
	secret := env.objects.secret(types.NamespacedName{Namespace: ns, Name: name})
	if secret == nil {
		return deny("Secret %s/%s not found", ns, name)
	}
	secretType, _ := annotations.AuthSecretType.Get(values)
	users, err := userFile(secret, secretType)
	if err == nil && !utf8.ValidString(users) {
		// The file travels to Envoy and the service as a string of the
		// route's configuration, which protobuf wants in UTF-8: bytes
		// that are not would fail the whole configuration, every
		// Ingress's. Tools write hashes in ASCII.
		err = fmt.Errorf("the users hold bytes that are not UTF-8")
	}
	if err != nil {
		return deny("Secret %s/%s: %v", ns, name, err)
	}
	var problems []problem
	if locked := unverifiable(users); len(locked) > 0 {
		problems = append(problems, problemf("InvalidAnnotation", "annotation %s: Secret %s/%s: no password can log in as %s: %s", key, ns, name,
			strings.Join(locked, ", "), "they have no hash, or one of a scheme the authorisation service does not verify"))
	}
	return users, "", problems
}

// userFile is the Secret's users as an htpasswd file: its key auth
// (auth-file, the default), or one line per key (auth-map), in key order.
func userFile(secret *corev1.Secret, secretType string) (string, error) {
	if secretType != "auth-map" {
		file, ok := secret.Data["auth"]
		if !ok {
			return "", fmt.Errorf("no key auth")
		}
		if strings.ContainsRune(string(file), 0) {
			return "", fmt.Errorf("key auth holds a NUL")
		}
		return string(file), nil
	}
	var b strings.Builder
	for _, user := range slices.Sorted(func(yield func(string) bool) {
		for k := range secret.Data {
			if !yield(k) {
				return
			}
		}
	}) {
		hash := strings.TrimRight(string(secret.Data[user]), "\r\n")
		if strings.ContainsAny(hash, "\r\n\x00") {
			// Another line would be another user of the file.
			return "", fmt.Errorf("the value of user %q spans several lines", user)
		}
		b.WriteString(user + ":" + hash + "\n")
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("no users")
	}
	return b.String(), nil
}

// unverifiable lists the users of a file whose hashes no password can
// match here, each once.
func unverifiable(file string) []string {
	var out []string
	for line := range strings.Lines(file) {
		line = strings.TrimRight(line, "\r\n")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		user, rest, _ := strings.Cut(line, ":")
		hash, _, _ := strings.Cut(rest, ":")
		if q := fmt.Sprintf("%q", user); !authzapi.SupportedHash(hash) && !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	return out
}
