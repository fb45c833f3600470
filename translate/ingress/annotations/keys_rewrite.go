package annotations

import (
	"fmt"
	"regexp"
	"strings"
)

// UseRegex makes the Ingress's paths regular expressions (and, as in
// ingress-nginx, every path of its hosts).
var UseRegex = key[bool](&definition{
	name:  "use-regex",
	under: Nginx,
	scope: ScopeRoute,
	doc: `"true": the Ingress's paths are regular expressions, matched case-insensitively from the start of the path, longest first. ` +
		`As in ingress-nginx, every path of the same host, from every Ingress, is then matched that way.`,
	verdict: HonouredWithDifference,
	note:    "RE2 syntax (Envoy's), not PCRE: a path RE2 refuses (look-arounds, backreferences) is a problem of its Ingress and not served.",
}, parseBool)

// RewriteTarget replaces the request path before it is forwarded.
var RewriteTarget = key[string](&definition{
	name:  "rewrite-target",
	under: Nginx,
	scope: ScopeRoute,
	doc: "The path the upstream receives instead of the request's, with `$1`...`$9` for the path's capture groups; " +
		"the query string is kept. Implies use-regex for the host, as in ingress-nginx.",
	verdict: HonouredWithDifference,
	note:    "RE2 syntax for the paths; nginx variables in the target (`$host`...) are refused.",
}, parseRewriteTarget)

// XForwardedPrefix sets X-Forwarded-Prefix on requests that are rewritten.
var XForwardedPrefix = key[string](&definition{
	name:    "x-forwarded-prefix",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     "The value of the X-Forwarded-Prefix header sent upstream with requests whose path rewrite-target rewrites.",
	verdict: HonouredWithDifference,
	note:    "a literal value only: capture groups (`$1`) in it are refused.",
}, parseForwardedPrefix)

// rewritePath is what ingress-nginx accepts in rewrite-target and
// x-forwarded-prefix (its parser's RegexPathWithCapture): a path of plain
// characters, with $ for capture groups.
var rewritePath = regexp.MustCompile(`^/?[-._~a-zA-Z0-9/:$]*$`)

// captureRef is $ and a group number, as nginx writes them.
var captureRef = regexp.MustCompile(`\$[1-9]`)

func parseRewriteTarget(s string) (string, error) {
	if !rewritePath.MatchString(s) {
		return "", fmt.Errorf("not a path (letters, digits, -._~/: and $1...$9)")
	}
	if strings.Contains(s, "://") || !strings.HasPrefix(s, "/") && !captureRef.MatchString(s[:min(2, len(s))]) {
		// nginx answers a rewrite to an absolute URL with a redirect
		// to it: not what a rewrite is for, and refused here.
		return "", fmt.Errorf("not a path: it must start with / (or a capture group $1...$9)")
	}
	if rest := captureRef.ReplaceAllString(s, ""); strings.Contains(rest, "$") {
		return "", fmt.Errorf("nginx variables are not supported, only $1 to $9")
	}
	return s, nil
}

func parseForwardedPrefix(s string) (string, error) {
	if !rewritePath.MatchString(s) {
		return "", fmt.Errorf("not a path (letters, digits, -._~/:)")
	}
	if strings.Contains(s, "$") {
		return "", fmt.Errorf("capture groups and variables are not supported in it")
	}
	return s, nil
}
