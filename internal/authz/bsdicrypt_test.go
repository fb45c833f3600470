package authz

import (
	"testing"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// bsdiVectors were made on this machine by perl's crypt() (libxcrypt) and
// checked against musl's __crypt_des built from its source (the same
// hashes): the empty password, one byte, exactly 8, 9 (the ninth counts,
// unlike the traditional scheme), several blocks of 8, bytes with the
// eighth bit set, counts from 1 to 5,001.
var bsdiVectors = []struct{ password, hash string }{
	{"test", "_J9..rasm3kk6ykRwAfc"},
	{"", "_J9..rasmTB5D3hoAd8A"},
	{"a", "_/...ab..OCtjQKircyA"},
	{"password", "_.../saltRWDJiXGmry."},
	{"12345678", "_1...XyZ.L7/BNei2Gl2"},
	{"123456789", "_1...XyZ.i79ScER2e.g"},
	{"12345678X", "_1...XyZ.yl88UZdw5e2"},
	{"a much longer password of several blocks!", "_7C/.Bf/4wgQt01uSes6"},
	{"sixteen bytes!!!", "_zz..zzzzOJ9CFUu9q8g"},
	{"\xc3\xa9t\xc3\xa9 et plus encore", "_K1..crsmFNiSpQz9zx."},
	{"pass word", "_6C/.yaiu3T0piNt8eeE"},
	{"pass word", "_J9..rasmRjdRCN/nX0s"}, // BenchmarkVerify's
}

func TestBSDiCryptVectors(t *testing.T) {
	for _, v := range bsdiVectors {
		if got := desCrypt(v.password, v.hash); got != v.hash {
			t.Errorf("desCrypt(%q, %q) = %s, want %s", v.password, v.hash[:9], got, v.hash)
		}
		if !authzapi.DESCrypt(v.hash) || !authzapi.SupportedHash(v.hash) {
			t.Errorf("%s is not recognised as DES crypt", v.hash)
		}
		if !verifyPassword(v.hash, v.password) {
			t.Errorf("%q does not verify against %s", v.password, v.hash)
		}
		// Every byte counts: one more, or the last one changed.
		if verifyPassword(v.hash, v.password+"x") {
			t.Errorf("%q and x verifies against %s", v.password, v.hash)
		}
		if v.password != "" {
			wrong := []byte(v.password)
			wrong[len(wrong)-1] ^= 2
			if verifyPassword(v.hash, string(wrong)) {
				t.Errorf("%q verifies against %s, made of %q", wrong, v.hash, v.password)
			}
		}
	}
}

func TestBSDiCryptDetection(t *testing.T) {
	for _, h := range []string{
		"_....rasm3kk6ykRwAfc",  // a count of zero
		"_J9..rasm3kk6ykRwAf",   // 19 characters
		"_J9..rasm3kk6ykRwAfcc", // 21
		"_J9..ra!m3kk6ykRwAfc",  // a salt character out of the alphabet
		"_J9..rasm3kk6ykRwAfd",  // the last character's low bits set
	} {
		if authzapi.DESCrypt(h) {
			t.Errorf("%q is taken for DES crypt", h)
		}
		if verifyPassword(h, "test") {
			t.Errorf("test verifies against %q", h)
		}
	}
}
