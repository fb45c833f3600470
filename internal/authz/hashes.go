package authz

import (
	"crypto/sha1" //nolint:gosec // {SHA} and {SSHA} hashes are SHA-1 by definition
	"crypto/subtle"
	"encoding/base64"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// verifyPassword says whether password matches an htpasswd hash, in any
// scheme nginx's auth_basic verifies (authzapi.SupportedHash lists them).
// A hash of any other scheme matches no password, as in nginx, whose
// crypt() finds no match for it either.
func verifyPassword(hash, password string) bool {
	// nginx hands every scheme the decoded password as a C string
	// (ngx_http_auth_basic_user ends it with a NUL; ngx_crypt's schemes
	// and crypt() take its ngx_strlen): a NUL ends it there too.
	if i := strings.IndexByte(password, 0); i >= 0 {
		password = password[:i]
	}
	switch {
	case strings.HasPrefix(hash, "$2a$"), strings.HasPrefix(hash, "$2b$"), strings.HasPrefix(hash, "$2y$"):
		// $2y$ (PHP's, htpasswd -B's) is $2b$ under another name.
		return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
	case strings.HasPrefix(hash, "$apr1$"):
		return equal(md5Crypt(password, hash, "$apr1$"), hash)
	case strings.HasPrefix(hash, "$1$"):
		return equal(md5Crypt(password, hash, "$1$"), hash)
	case strings.HasPrefix(hash, "$5$"):
		return equal(shaCrypt(password, hash, sha256Variant), hash)
	case strings.HasPrefix(hash, "$6$"):
		return equal(shaCrypt(password, hash, sha512Variant), hash)
	case strings.HasPrefix(hash, "{PLAIN}"):
		return equal(password, hash[len("{PLAIN}"):])
	case strings.HasPrefix(hash, "{SHA}"):
		sum := sha1.Sum([]byte(password))
		return equal(base64.StdEncoding.EncodeToString(sum[:]), hash[len("{SHA}"):])
	case strings.HasPrefix(hash, "{SSHA}"):
		return sshaMatches(hash[len("{SSHA}"):], password)
	case authzapi.DESCrypt(hash):
		// No prefix: nginx hands it to crypt(), whose traditional DES
		// takes the first two characters as the salt.
		return equal(desCrypt(password, hash), hash)
	}
	return false
}

// sshaMatches checks a salted SHA-1: base64 of the digest of the password
// and the salt, followed by the salt.
func sshaMatches(encoded, password string) bool {
	raw, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || len(raw) <= sha1.Size {
		return false
	}
	h := sha1.New()
	h.Write([]byte(password))
	h.Write(raw[sha1.Size:])
	return subtle.ConstantTimeCompare(h.Sum(nil), raw[:sha1.Size]) == 1
}

// equal compares in constant time, so that the time taken says nothing
// about how much of a guess was right.
func equal(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// cryptAlphabet is crypt's base-64 alphabet.
const cryptAlphabet = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// to64 appends the n low 6-bit groups of v, least significant first, as
// crypt encodes.
func to64(out []byte, v uint32, n int) []byte {
	for ; n > 0; n-- {
		out = append(out, cryptAlphabet[v&0x3f])
		v >>= 6
	}
	return out
}
