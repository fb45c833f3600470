package authz

import (
	"strings"
	"testing"

	"github.com/GehirnInc/crypt"
	"golang.org/x/crypto/bcrypt"
)

// The hashes were made by real tools (openssl passwd -1, -apr1, -5, -6;
// the C library's crypt() through perl; Python's hashlib for {SSHA}), not by
// the code under test.
var hashVectors = []struct {
	tool, password, hash string
}{
	{"openssl passwd -1", "pass word", "$1$saltsalt$1K7dkhtbTNVUwUicA5kOT1"},
	{"openssl passwd -1", "p", "$1$x$hiN0EG1U2OVhvWQBid7j81"},
	{"openssl passwd -apr1", "pass word", "$apr1$saltsalt$qYpLAVWkBvXFyDme7.oc1/"},
	{"openssl passwd -5", "pass word", "$5$saltsalt$9Wp9Qw4Ze8Jxq5F1Z3UnS47KFhc8AqhCRyxFDa8e660"},
	{"openssl passwd -6", "pass word", "$6$saltsalt$cc1KsgmlKYtCcnNH8.sv7Fe8mca8fAso5fHlNrb1VZa5WYQ.L3ChTcx06ID.LoaXZAf9CZNraK43XCp7LxKHl1"},
	{"openssl passwd -6 (a salt cut at 16, a password longer than the digest)",
		"a much longer password than sixty-four bytes, to make the loop over B run twice or more!!",
		"$6$saltsaltsaltsalt$Ruh9s.Vqd.hHawS4GclNdNeRnUT6A2LmHHwJVuKALX8eumym1Pfze0cmKSMpOqHEeotXRgrVMkPAPGRmzwGAm."},
	{"crypt() $5$ rounds", "Hello world!", "$5$rounds=10000$saltstringsaltst$3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA"},
	{"crypt() $5$ rounds, short salt", "we have a short salt string but not a short password", "$5$rounds=77777$short$JiO1O3ZpDAxGJeaDIuqCoEFysAe1mZNJRs3pw0KQRd/"},
	{"crypt() $6$ rounds", "Hello world!", "$6$rounds=1400$anotherlongsalts$5FGyu8c4BZDX4wJgs0Un26YOw2XibT5eTkHF1I1aP3QqStoJI9BHD2YPJYsAjEePVGUyBjdZxcNqMWlrrbIOC."},
	{"crypt() $6$ rounds, short salt", "pass", "$6$rounds=5000$short$8e0IPcSzeJJVpekHXXJyvNMFLrmGh1.SnUmoS3RwIRfj7KlOlpxYkufMLpEIQsi7wWE.V/nlXoy.B5lWmf2.c."},
	// A salt that starts with "rounds=", which crypt(3) has only in
	// SHA-crypt: crypt() too for the first.
	{"openssl passwd -1 -salt rounds=5", "pass", "$1$rounds=5$zdKjdNt1rBjapOj3vB3dW/"},
	{"openssl passwd -apr1 -salt rounds=", "pass", "$apr1$rounds=$Wdx79Fm3MXGdc6vFrn7AS1"},
	{"crypt() $2b$", "pass", "$2b$05$abcdefghijklmnopqrstuuZFBUbfXoM8LFiPx8LYlO/sXZB/Cwk3K"},
	{"crypt() traditional DES", "pass", "abccBcrPOxnLU"},
	{"htpasswd -s ({SHA}: openssl dgst -sha1 | base64)", "secret", "{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ="},
	{"{PLAIN}", "plain text", "{PLAIN}plain text"},
	{"{SSHA} (hashlib.sha1 of password and salt, then the salt)", "salted", "{SSHA}TTHJCQxvDArxbE718yQusN+sPxpOYUNsMTIzNA=="},
}

func TestVerifyPasswordVectors(t *testing.T) {
	for _, v := range hashVectors {
		if !verifyPassword(v.hash, v.password) {
			t.Errorf("%s: %q does not verify against %s", v.tool, v.password, v.hash)
		}
		if verifyPassword(v.hash, v.password+"x") || verifyPassword(v.hash, "") {
			t.Errorf("%s: a wrong password verifies against %s", v.tool, v.hash)
		}
		// nginx's password is a C string: what follows a NUL is not of it.
		if !verifyPassword(v.hash, v.password+"\x00x") {
			t.Errorf("%s: %q and a NUL, then more, does not verify against %s", v.tool, v.password, v.hash)
		}
		if v.password != "" && verifyPassword(v.hash, "\x00"+v.password) {
			t.Errorf("%s: a NUL, then %q, verifies against %s", v.tool, v.password, v.hash)
		}
	}
}

// The salted computations are checked against the vectors above; their
// output must also be exactly the stored hash, so that the comparison is
// the whole string's.
func TestCryptOutputs(t *testing.T) {
	for _, v := range hashVectors {
		switch {
		case strings.HasPrefix(v.hash, "$1$"), strings.HasPrefix(v.hash, "$apr1$"),
			strings.HasPrefix(v.hash, "$5$"), strings.HasPrefix(v.hash, "$6$"):
		default:
			continue
		}
		if got, ok := saltedCrypt(v.password, v.hash); !ok || got != v.hash {
			t.Errorf("%s: got %s, want %s", v.tool, got, v.hash)
		}
	}
}

// What crypt(3) makes of a setting (a hash's start) that no hash holds: a
// salt past its maximum length is cut, a rounds= out of bounds is clamped
// as glibc does (its output says the rounds it took, so that a hash with
// rounds out of bounds matches no password), an unterminated or
// non-numeric rounds= fails, and so does one past 64 bits (glibc would
// clamp it, with the same result: a hash that holds it matches nothing).
func TestSaltedCryptSettings(t *testing.T) {
	for _, c := range []struct{ password, setting, want string }{
		{"pass word", "$1$saltsaltEXTRA$", "$1$saltsalt$1K7dkhtbTNVUwUicA5kOT1"},
		{"pass word", "$apr1$saltsaltEXTRA", "$apr1$saltsalt$qYpLAVWkBvXFyDme7.oc1/"},
		// crypt() (perl's)
		{"Hello world!", "$5$saltstringsaltstringXX$", "$5$saltstringsaltst$a5C8Ofk71MUIoKve2QuP9FMl.dwNgseF5tR1LGAL7iB"},
		// glibc's and the SHA-crypt specification's vectors (libxcrypt,
		// perl's here, refuses rounds below 1000 instead)
		{"the minimum number is still observed", "$5$rounds=10$roundstoolow", "$5$rounds=1000$roundstoolow$yfvwcWrQ8l/K0DAWyuPMDNHpIVlTQebY9l/gL972bIC"},
		{"the minimum number is still observed", "$6$rounds=10$roundstoolow", "$6$rounds=1000$roundstoolow$kUMsbe306n21p9R.FRkW3IGn.S9NPN0x50YhH1xhLsPuWGsUSklZt58jaTfF4ZEQpyUNGc0dqbpBYYBaHHrsX."},
	} {
		if got, ok := saltedCrypt(c.password, c.setting); !ok || got != c.want {
			t.Errorf("%q with %s: got %s (%v), want %s", c.password, c.setting, got, ok, c.want)
		}
	}
	// The maximum (999,999,999 rounds take minutes: the bound is checked
	// as the library reads it, not computed).
	for _, s := range []string{"$5$rounds=1000000000$salt$", "$6$rounds=4000000000$salt$"} {
		c := crypt.NewFromHash(s)
		if n, err := c.Cost(s); err != nil || n != 999999999 {
			t.Errorf("%s: %d rounds (%v), want 999999999", s, n, err)
		}
	}
	for _, s := range []string{"$5$rounds=5000", "$6$rounds=$salt$", "$6$rounds=x$salt$", "$5$rounds=99999999999999999999$salt$"} {
		if got, ok := saltedCrypt("pass", s); ok {
			t.Errorf("%s: got %s, want a failure", s, got)
		}
	}
}

func TestBcryptVariants(t *testing.T) {
	h, err := bcrypt.GenerateFromPassword([]byte("bar"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	// htpasswd -B writes $2y$, other tools $2a$ or $2b$: the same hash.
	for _, prefix := range []string{"$2a$", "$2b$", "$2y$"} {
		hash := prefix + string(h[4:])
		if !verifyPassword(hash, "bar") || verifyPassword(hash, "baz") {
			t.Errorf("%s: bar verifies %v, baz %v", hash, verifyPassword(hash, "bar"), verifyPassword(hash, "baz"))
		}
	}
}

func TestUnknownSchemesMatchNothing(t *testing.T) {
	// A DES crypt hash (13 characters, no prefix) is a scheme:
	// descrypt_test.go.
	for _, hash := range []string{"", "bar", "abccBcrPOxnL", "$3$whatever", "{SHA}", "{SSHA}!!!", "$5$rounds=x$salt$abc"} {
		for _, pw := range []string{"", "bar", "pass", hash} {
			if verifyPassword(hash, pw) {
				t.Errorf("%q verifies against %q", pw, hash)
			}
		}
	}
}
