package authz

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// FuzzVerifyPassword gives verifyPassword arbitrary hashes and passwords:
// whatever a Secret holds, a hash of any scheme is a match or no match,
// never a panic, and for the library's schemes a match is exactly crypt's
// output being the hash. `go test` runs the seeds; `go test -run '^$'
// -fuzz FuzzVerifyPassword ./internal/authz` explores.
func FuzzVerifyPassword(f *testing.F) {
	for _, v := range hashVectors {
		f.Add(v.hash, v.password)
	}
	for _, v := range desVectors {
		f.Add(v.hash, v.password)
	}
	for _, v := range bsdiVectors {
		f.Add(v.hash, v.password)
	}
	for _, h := range []string{
		"$1$", "$1$$", "$apr1$rounds=", "$1$rounds=x$y$z", "$5$rounds=", "$5$rounds=$",
		"$6$rounds=-5$salt$", "$6$rounds=+1000$salt$", "$5$rounds=1000", "$6$$", "$5$\x00$",
		"$6$rounds=1000$rounds=1000$salt$", "$apr1$$$$$$", "{SSHA}", "{SHA}=", "_", "_J9..",
	} {
		f.Add(h, "pass")
	}
	f.Fuzz(func(t *testing.T, hash, password string) {
		if costly(hash) {
			t.Skip("a cost that takes seconds: correct, but not for a fuzzer")
		}
		got := verifyPassword(hash, password)
		if strings.HasPrefix(hash, "$1$") || strings.HasPrefix(hash, "$apr1$") ||
			strings.HasPrefix(hash, "$5$") || strings.HasPrefix(hash, "$6$") {
			out, ok := saltedCrypt(cString(password), hash)
			if want := ok && out == hash; got != want {
				t.Errorf("verifyPassword(%q, %q) = %v, crypt's output %q (%v)", hash, password, got, out, ok)
			}
		}
	})
}

// costly says whether verifying hash takes long by design: bcrypt (not
// ours), SHA-crypt's rounds= or BSDi's count set high.
func costly(hash string) bool {
	switch {
	case strings.HasPrefix(hash, "$2"):
		return true
	case strings.HasPrefix(hash, "$5$rounds="), strings.HasPrefix(hash, "$6$rounds="):
		digits, _, _ := strings.Cut(hash[len("$5$rounds="):], "$")
		n, err := strconv.Atoi(digits) // as the library reads it
		return err == nil && n > 20000
	case authzapi.DESCrypt(hash) && hash[0] == '_':
		return bsdiField(hash[1:5]) > 5000
	}
	return false
}
