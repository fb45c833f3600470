package authz

import (
	"crypto/sha1" //nolint:gosec // {SHA} and {SSHA} hashes are SHA-1 by definition
	"crypto/subtle"
	"encoding/base64"
	"strings"

	"github.com/GehirnInc/crypt"
	"github.com/GehirnInc/crypt/apr1_crypt"
	"github.com/GehirnInc/crypt/md5_crypt"
	"github.com/GehirnInc/crypt/sha256_crypt"
	"github.com/GehirnInc/crypt/sha512_crypt"
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
	case strings.HasPrefix(hash, "$apr1$"), strings.HasPrefix(hash, "$1$"),
		strings.HasPrefix(hash, "$5$"), strings.HasPrefix(hash, "$6$"):
		out, ok := saltedCrypt(password, hash)
		return ok && equal(out, hash)
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

// saltedCrypt is what crypt(3) makes of password with the setting of hash,
// of the MD5-crypt ($1$), Apache MD5 ($apr1$) or SHA-crypt ($5$, $6$)
// scheme: the magic, for SHA-crypt an optional "rounds=N$" (N clamped to
// 1000..999999999, as glibc does), and the salt, up to the next "$" and at
// most 8 characters (MD5) or 16 (SHA). ok is false where crypt fails (an
// unterminated or non-numeric rounds=): no password matches then. The
// library computes it; it verifies by a constant-time comparison of the
// whole string, as verifyPassword does with what this returns.
func saltedCrypt(password, hash string) (out string, ok bool) {
	var c crypt.Crypter
	var magic string
	rounds := false
	switch {
	case strings.HasPrefix(hash, apr1_crypt.MagicPrefix):
		c, magic = apr1_crypt.New(), apr1_crypt.MagicPrefix
	case strings.HasPrefix(hash, md5_crypt.MagicPrefix):
		c, magic = md5_crypt.New(), md5_crypt.MagicPrefix
	case strings.HasPrefix(hash, sha256_crypt.MagicPrefix):
		c, magic, rounds = sha256_crypt.New(), sha256_crypt.MagicPrefix, true
	case strings.HasPrefix(hash, sha512_crypt.MagicPrefix):
		c, magic, rounds = sha512_crypt.New(), sha512_crypt.MagicPrefix, true
	default:
		return "", false
	}
	rest := hash[len(magic):]
	prefix := ""
	if rounds {
		if r, ok := strings.CutPrefix(rest, "rounds="); ok {
			digits, after, found := strings.Cut(r, "$")
			if !found {
				return "", false // crypt() fails on it
			}
			prefix, rest = "rounds="+digits+"$", after
		}
	} else if strings.HasPrefix(rest, "rounds=") {
		// The library's parser reads a rounds= in MD5-crypt's setting
		// too, where crypt(3) has none: "rounds=" (7 characters, of 8)
		// starts a salt there, which the library cannot take. No tool
		// writes such a salt (theirs are of crypt's alphabet, which has
		// no "="), but openssl passwd -1 -salt does on request, and
		// nginx verifies it: ours computes that case.
		return md5Crypt(password, hash, magic), true
	}
	salt, _, _ := strings.Cut(rest, "$")
	// The setting ends at the salt: given the whole hash after a
	// rounds=, the library takes the salt, its "$" and the result for the
	// salt, cut at the maximum length, so that a shorter salt (glibc's own
	// "$5$rounds=77777$short$...") would never match.
	out, err := c.Generate([]byte(password), []byte(magic+prefix+salt))
	if err != nil {
		return "", false
	}
	return out, true
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
