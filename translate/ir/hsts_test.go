package ir

import "testing"

func TestValidHSTS(t *testing.T) {
	for s, want := range map[string]bool{
		"max-age=31536000; includeSubDomains": true, "max-age=0": true, "max-age=600; preload": true,
		"max-age=600; includeSubDomains; preload": true, "": false, "max-age=": false, "max-age=5;": false,
		"max-age=-1": false, "max-age=05": false, "max-age=1; preload; includeSubDomains": false,
		"max-age=1\r\nX-Injected: 1": false, "max-age=99999999999": false,
	} {
		if got := validHSTS(s); got != want {
			t.Errorf("validHSTS(%q) = %v, want %v", s, got, want)
		}
	}
}
