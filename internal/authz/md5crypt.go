package authz

import (
	"crypto/md5" //nolint:gosec // MD5-crypt is MD5 by definition
	"strings"
)

// md5Crypt hashes a password as Poul-Henning Kamp's MD5-crypt does, with
// the salt of setting (magic, then up to 8 characters, up to a "$"): magic
// "$1$" is the C library's, "$apr1$" Apache's (htpasswd -m), the same
// algorithm under another name. The library (saltedCrypt) computes every
// other salt: this is only for those that start with "rounds=", which its
// parser reads as SHA-crypt's rounds and so cannot take.
func md5Crypt(password, setting, magic string) string {
	salt := strings.TrimPrefix(setting, magic)
	if i := strings.IndexByte(salt, '$'); i >= 0 {
		salt = salt[:i]
	}
	if len(salt) > 8 {
		salt = salt[:8]
	}
	pw := []byte(password)

	alt := md5.New()
	alt.Write(pw)
	alt.Write([]byte(salt))
	alt.Write(pw)
	altSum := alt.Sum(nil)

	ctx := md5.New()
	ctx.Write(pw)
	ctx.Write([]byte(magic))
	ctx.Write([]byte(salt))
	for n := len(pw); n > 0; n -= 16 {
		ctx.Write(altSum[:min(n, 16)])
	}
	for n := len(pw); n != 0; n >>= 1 {
		if n&1 != 0 {
			ctx.Write([]byte{0})
		} else {
			ctx.Write(pw[:1])
		}
	}
	final := ctx.Sum(nil)

	// The thousand rounds that make guessing slower.
	for i := range 1000 {
		c := md5.New()
		if i&1 != 0 {
			c.Write(pw)
		} else {
			c.Write(final)
		}
		if i%3 != 0 {
			c.Write([]byte(salt))
		}
		if i%7 != 0 {
			c.Write(pw)
		}
		if i&1 != 0 {
			c.Write(final)
		} else {
			c.Write(pw)
		}
		final = c.Sum(final[:0])
	}

	out := make([]byte, 0, len(magic)+len(salt)+1+22)
	out = append(append(append(out, magic...), salt...), '$')
	for _, g := range [][3]int{{0, 6, 12}, {1, 7, 13}, {2, 8, 14}, {3, 9, 15}, {4, 10, 5}} {
		out = to64(out, uint32(final[g[0]])<<16|uint32(final[g[1]])<<8|uint32(final[g[2]]), 4)
	}
	return string(to64(out, uint32(final[11]), 2))
}
