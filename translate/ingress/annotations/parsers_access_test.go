package annotations

import (
	"slices"
	"testing"
)

// The source ranges read as ingress-nginx's net.ParseIPNets reads them
// (internal/net/ipnet.go and ipallowlist/main_test.go): CIDRs and single
// addresses, trimmed, host bits dropped; anything else, empty entries
// included, is an error.
func TestParseCIDRs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"10.0.0.0/8", []string{"10.0.0.0/8"}},
		{"18.0.0.0/8, 56.0.0.0/8", []string{"18.0.0.0/8", "56.0.0.0/8"}},
		{"56.0.0.1", []string{"56.0.0.1/32"}},
		{" 10.1.2.3/8 ,2001:db8::1/32", []string{"10.0.0.0/8", "2001:db8::/32"}},
		{"2001:db8::1", []string{"2001:db8::1/128"}},
		{"::ffff:10.0.0.1", []string{"10.0.0.1/32"}},
		{"::ffff:10.0.0.0/104", []string{"10.0.0.0/8"}},
		{"10.0.0.0/8,10.0.0.0/8,1.2.3.4", []string{"1.2.3.4/32", "10.0.0.0/8"}},
		{"0.0.0.0/0", []string{"0.0.0.0/0"}},
	} {
		got, err := parseCIDRs(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("parseCIDRs(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{
		"", " ", "10.0.0.0/8,", ",10.0.0.0/8", "10.0.0.0/8,,1.2.3.4",
		"10.0.0.0/33", "2001:db8::/129", "10.0.0", "010.0.0.1", "example.com",
		"10.0.0.0/8;1.2.3.4", "fe80::1%eth0", "fe80::/10%eth0", "1.2.3.4/", "/8", "10.0.0.0/-1",
		"1.2.3.4\x00", "1.2.3.4 5.6.7.8",
	} {
		if got, err := parseCIDRs(bad); err == nil {
			t.Errorf("parseCIDRs(%q) = %v, want an error", bad, got)
		}
	}
}
