package annotations

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// urlChars is what ingress-nginx's parser lets into a redirect URL (its
// URLIsValidRegex): letters, digits and -._~/:,?&=. With no @ there is no
// userinfo, and with no % nor space nothing is escaped or injected.
var urlChars = regexp.MustCompile(`^[-._~a-zA-Z0-9/:,?&=]+$`)

// parseRedirectURL reads a redirect target: an http or https URL with a
// host, or, when paths is set, an absolute path (which ingress-nginx's
// permanent-redirect takes and nginx makes absolute).
func parseRedirectURL(paths bool) func(string) (string, error) {
	return func(s string) (string, error) {
		s = strings.TrimSpace(s)
		if !urlChars.MatchString(s) {
			return "", fmt.Errorf("not a URL ingress-nginx takes (only letters, digits and -._~/:,?&= are allowed)")
		}
		u, err := url.Parse(s)
		if err != nil {
			return "", fmt.Errorf("not a URL: %w", err)
		}
		switch {
		case (u.Scheme == "http" || u.Scheme == "https") && u.Host != "":
		case paths && u.Scheme == "" && u.Host == "" && strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//"):
		case paths:
			return "", fmt.Errorf("not an http or https URL with a host, nor an absolute path")
		default:
			return "", fmt.Errorf("not an http or https URL with a host")
		}
		return s, nil
	}
}

// parseRedirectCode reads a status as ingress-nginx does (strconv.Atoi),
// keeping only the codes that are redirects with a Location: ingress-nginx
// takes the others of its range too, and nginx then sends the URL as a
// body.
func parseRedirectCode(codes ...uint32) func(string) (uint32, error) {
	return func(s string) (uint32, error) {
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, fmt.Errorf("not a whole number")
		}
		if n < 0 || !slices.Contains(codes, uint32(n)) {
			return 0, fmt.Errorf("%d is not one of %v", n, codes)
		}
		return uint32(n), nil
	}
}

// appRootChars is what ingress-nginx's parser lets into app-root (its
// RegexPathWithCapture) but $, which nginx would read as a variable.
var appRootChars = regexp.MustCompile(`^/[-._~a-zA-Z0-9/:]*$`)

// parseAppRoot reads an application root: a path, never an absolute URL
// (ingress-nginx refuses those too).
func parseAppRoot(s string) (string, error) {
	s = strings.TrimSpace(s)
	u, err := url.ParseRequestURI(s)
	switch {
	case err == nil && u.IsAbs():
		return "", fmt.Errorf("an absolute URL: app-root takes a path (such as /app)")
	case err != nil || !appRootChars.MatchString(s):
		return "", fmt.Errorf("not a path ingress-nginx takes (/ then letters, digits and -._~/:)")
	}
	return s, nil
}
