package authz

import (
	"crypto/des"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// desVectors were made on this machine by perl's crypt(), which is the C
// library's (Debian's libxcrypt): perl -e 'print crypt($password, $salt)',
// the password's bytes as written here. They cover the empty password, one
// character, exactly 8, more than 8 (the same hash as its first 8: crypt(3)
// ignores the rest), bytes with the eighth bit set (ignored: "\xc1\xe2" is
// "Ab"), control characters, a NUL (C's string ends there, as it does for
// nginx, which hands crypt() the decoded password as a C string), and salts
// of every class of crypt's alphabet.
var desVectors = []struct{ password, hash string }{
	{"", "abmF1QH4PEr.E"},
	{"a", "abxxB7HlIeckU"},
	{"password", "abJnggxhB/yWI"},
	{"password", "..UZoIyj/Hy/c"},
	{"password", "//TIk/siaNpyQ"},
	{"password", "./xZjzHv5vzVE"},
	{"password", "09OAkv5TeWC7c"},
	{"password", "AZ1YI30i2lsIk"},
	{"password", "azoV33FJ2h3AA"},
	{"password", "zzXUHfURnGg8I"},
	{"password", "ZziFATVXHo2.6"},
	{"password", "9.ccCdgR.77ws"},
	{"x", "8QlURpboGy0rQ"},
	{"12345678", "AyYo6wW14ml4Q"},
	{"12345678plus", "AyYo6wW14ml4Q"},
	{"passwordXYZ", "abJnggxhB/yWI"},
	{"pass word", "saxHz2gTApa3g"},
	{"\xc3\xa9t\xc3\xa9", "e1X/yQ3odHd4k"},
	{"\xff\xfe\x80\x81", "/ZdbDWkQezPJY"},
	{"\x7f\x01\x02", "q7Kzwe/PwwvFM"},
	{"Z\xda", "MmUTOg0LDS3Qo"},
	{"bar", "Hii2Eik9E967o"},
	{"!@#$%^&*()", "k2wCyf0q0yzJM"},
	{"colon:in", "c06mCiNS.bR/w"},
	{"tab\x09here", "T.fCuoXXihYos"},
	{"        ", "spkQ2YtYWqR6E"},
	{"Ab", "QxS25zz9RmN6k"},
	{"\xc1\xe2", "QxS25zz9RmN6k"},
	{"ab\x00cd", "zzVy/und7Mtqk"},
	// musl's crypt(), the C library of ingress-nginx's Alpine image, takes
	// salts out of the alphabet, where libxcrypt (perl's here) fails with
	// "*0": these were made by musl's __crypt_des built from its source
	// (git.musl-libc.org, commit 86373b49) beside this repository; the
	// first is the self-test vector in that source.
	{"\x80\xff\x80\x01 \x7f\x81\x80\x80\x0d\x0a\xff\x7f \x81 test", "\x80x22/wK52ZKGA"},
	{"password", "!!DwARN3kN10k"},
	{"password", " ~N0EJEgLthvk"},
	{"password", "$37g8yeDfMdQA"},
	{"password", "{}HDTuSCs5FOM"},
	{"password", "\x80xF6NQoyblqO6"},
	{"password", "\xff\xfe3/TuB1QW6Z2"},
	{"password", "a\x01EuEaybn35SM"},
	{"password", "\x7f@gGlbu/jxsu6"},
	{"password", "[`IQXjgrJ/D/M"},
	{"pass", "\xc3\xa9X/5nfv3trnA"},
}

func TestDESCryptVectors(t *testing.T) {
	for _, v := range desVectors {
		if got := desCrypt(v.password, v.hash); got != v.hash {
			t.Errorf("desCrypt(%q, %q) = %s, want %s", v.password, v.hash[:2], got, v.hash)
		}
		if !authzapi.DESCrypt(v.hash) || !authzapi.SupportedHash(v.hash) || len(v.hash) != 13 {
			t.Errorf("%s is not recognised as DES crypt", v.hash)
		}
		if !verifyPassword(v.hash, v.password) {
			t.Errorf("%q does not verify against %s", v.password, v.hash)
		}
		// A password that differs within its first 8 bytes (C's string:
		// up to a NUL) does not match.
		wrong := []byte(v.password)
		if i := len(cString(v.password)); i == 0 {
			wrong = []byte("x")
		} else {
			wrong[min(i, 8)-1] ^= 1
		}
		if verifyPassword(v.hash, string(wrong)) {
			t.Errorf("%q verifies against %s, made of %q", wrong, v.hash, v.password)
		}
	}
}

// cString is s as C sees it: up to its first NUL.
func cString(s string) string {
	for i := range len(s) {
		if s[i] == 0 {
			return s[:i]
		}
	}
	return s
}

// Only the first 8 bytes count: anything after them verifies.
func TestDESCryptIgnoresAfterEight(t *testing.T) {
	const hash = "abJnggxhB/yWI" // crypt("password", "ab")
	for _, pw := range []string{"password", "password1", "passwordpasswordpassword", "password\x00x"} {
		if !verifyPassword(hash, pw) {
			t.Errorf("%q does not verify against %s", pw, hash)
		}
	}
	for _, pw := range []string{"passwor", "passwore", "Password", "", "passwor\x00d"} {
		if verifyPassword(hash, pw) {
			t.Errorf("%q verifies against %s", pw, hash)
		}
	}
}

// With a zero salt, DES crypt's cipher is DES itself: the rounds written
// here must agree with Go's crypto/des for any key and block.
func TestDESRoundsAreDES(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		key, block := r.Uint64(), r.Uint64()
		var kb [8]byte
		binary.BigEndian.PutUint64(kb[:], key)
		c, err := des.NewCipher(kb[:])
		if err != nil {
			t.Fatal(err)
		}
		var in, want [8]byte
		binary.BigEndian.PutUint64(in[:], block)
		c.Encrypt(want[:], in[:])
		subkeys := desSubkeys(key)
		if got := desEncrypt(block, &subkeys, 0); got != binary.BigEndian.Uint64(want[:]) {
			t.Fatalf("key %016x block %016x: %016x, crypto/des %x", key, block, got, want)
		}
	}
}

// The detection takes exactly what DES crypt can produce, and none of the
// prefixed schemes' hashes nor other strings.
func TestDESCryptDetection(t *testing.T) {
	for _, h := range []string{
		"",
		"abJnggxhB/yWI" + "x",     // 14 characters
		"abJnggxhB/yW",            // 12
		"abJnggxhB/yWJ",           // its last character's low bits set: no 64-bit result ends so
		"ab!nggxhB/yWI",           // a character out of the alphabet
		"{SHA}nggxhB/y",           // a scheme's prefix
		"$1$nggxhB/yWI",           // a crypt's prefix
		"_J9..rasm3kk6",           // "_" starts BSDi's extended DES (20 characters)
		"a:Jnggxhb/yWI",           // ":" ends the hash in nginx's reading
		"\rbJnggxhb/yWI",          // so does a line end
		"abJnggxhB/yW\u00c9"[:13], // a byte of UTF-8
	} {
		if authzapi.DESCrypt(h) {
			t.Errorf("%q is taken for DES crypt", h)
		}
		for _, pw := range []string{"", "password", h} {
			if verifyPassword(h, pw) {
				t.Errorf("%q verifies against %q", pw, h)
			}
		}
	}
}
