package authz

import (
	"context"
	"fmt"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// BenchmarkVerify is one password verification of each scheme, uncached:
// what the first request of a client costs the service (bcrypt at
// htpasswd -B's default cost 5, Go's and the e2e tests' 10, and
// ingress-nginx's tests' 14).
func BenchmarkVerify(b *testing.B) {
	cases := []struct{ name, hash string }{
		{"apr1", "$apr1$saltsalt$qYpLAVWkBvXFyDme7.oc1/"},
		{"sha512crypt", "$6$saltsalt$cc1KsgmlKYtCcnNH8.sv7Fe8mca8fAso5fHlNrb1VZa5WYQ.L3ChTcx06ID.LoaXZAf9CZNraK43XCp7LxKHl1"},
		{"sha", "{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ="},
		{"descrypt", "saxHz2gTApa3g"}, // perl's crypt("pass word", "sa")
		// perl's crypt("pass word", "_J9..rasm"): 725 iterations, the
		// count FreeBSD's crypt wrote.
		{"bsdicrypt", "_J9..rasmRjdRCN/nX0s"},
	}
	for _, cost := range []int{5, 10, 14} {
		h, err := bcrypt.GenerateFromPassword([]byte("pass word"), cost)
		if err != nil {
			b.Fatal(err)
		}
		cases = append(cases, struct{ name, hash string }{fmt.Sprintf("bcrypt-%02d", cost), string(h)})
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				verifyPassword(c.hash, "pass word")
			}
		})
	}
}

// BenchmarkBasicCheck is the basic checker's whole check, the Authorization
// header parsed and the user found in a file of 100 users: with the cache
// (every request of a client after its first) and without (bcrypt cost 10).
func BenchmarkBasicCheck(b *testing.B) {
	h, err := bcrypt.GenerateFromPassword([]byte("bar"), bcrypt.DefaultCost)
	if err != nil {
		b.Fatal(err)
	}
	file := ""
	for i := range 99 {
		file += fmt.Sprintf("user%02d:{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=\n", i)
	}
	file += "foo:" + string(h) + "\n"
	ext := map[string]string{authzapi.KeyKind: authzapi.KindBasic, authzapi.BasicUsers: file}
	req := checkRequest(ext, basicHeader("foo", "bar"))
	for _, c := range []struct {
		name string
		o    CacheOptions
	}{{"cached", DefaultCacheOptions()}, {"uncached", CacheOptions{}}} {
		b.Run(c.name, func(b *testing.B) {
			checker := newBasicChecker(c.o)
			// The client's first request, which fills the cache.
			if _, err := checker.check(context.Background(), req, ext); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				resp, err := checker.check(context.Background(), req, ext)
				if err != nil || resp.GetOkResponse() == nil {
					b.Fatalf("%v %v", resp, err)
				}
			}
		})
	}
}
