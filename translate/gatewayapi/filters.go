package gatewayapi

import (
	"fmt"
	"regexp"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// applied is what a rule's filters make of its routes.
type applied struct {
	requestHeaders, responseHeaders *ir.HeaderChanges
	redirect                        *gwapiv1.HTTPRequestRedirectFilter
	rewrite                         *gwapiv1.HTTPURLRewriteFilter
	// mirrors are resolved by the build (mirrors.go), which can read
	// Services and ReferenceGrants.
	mirrors []*gwapiv1.HTTPRequestMirrorFilter
	cors    *ir.CORS
	// mirrored, timeouts and retries are the rule's mirrors, resolved,
	// its timeouts and its retries.
	mirrored []ir.Mirror
	timeouts *ir.Timeouts
	retries  *ir.Retries
}

// filters reads a rule's filters. A filter that cannot be applied is an
// error: Gateway API says such a rule must not be served without it, so
// the caller answers the rule 500 (and nothing else of the Route changes).
func filters(fs []gwapiv1.HTTPRouteFilter) (applied, error) {
	var out applied
	for i, f := range fs {
		var err error
		switch f.Type {
		case gwapiv1.HTTPRouteFilterRequestHeaderModifier:
			out.requestHeaders, err = headerChanges(f.RequestHeaderModifier, out.requestHeaders, true)
		case gwapiv1.HTTPRouteFilterResponseHeaderModifier:
			out.responseHeaders, err = headerChanges(f.ResponseHeaderModifier, out.responseHeaders, false)
		case gwapiv1.HTTPRouteFilterRequestRedirect:
			if out.redirect != nil || out.rewrite != nil || f.RequestRedirect == nil {
				err = fmt.Errorf("one RequestRedirect and no URLRewrite beside it")
			}
			out.redirect = f.RequestRedirect
		case gwapiv1.HTTPRouteFilterURLRewrite:
			if out.redirect != nil || out.rewrite != nil || f.URLRewrite == nil {
				err = fmt.Errorf("one URLRewrite and no RequestRedirect beside it")
			}
			out.rewrite = f.URLRewrite
		case gwapiv1.HTTPRouteFilterRequestMirror:
			if f.RequestMirror == nil {
				err = fmt.Errorf("a RequestMirror without its settings")
			}
			out.mirrors = append(out.mirrors, f.RequestMirror)
		case gwapiv1.HTTPRouteFilterCORS:
			if out.cors != nil {
				err = fmt.Errorf("a second CORS filter")
				break
			}
			out.cors, err = cors(f.CORS)
		default:
			err = fmt.Errorf("type %s is not supported yet", f.Type)
		}
		if err != nil {
			return out, fmt.Errorf("filters[%d]: %w", i, err)
		}
	}
	return out, nil
}

// headerChanges turns a header modifier into the IR's, added to what an
// earlier filter of the rule asked. Envoy never lets a route remove the
// Host header; setting it is URLRewrite's hostname.
func headerChanges(f *gwapiv1.HTTPHeaderFilter, prev *ir.HeaderChanges, request bool) (*ir.HeaderChanges, error) {
	if f == nil {
		return prev, fmt.Errorf("a header modifier without its settings")
	}
	out := &ir.HeaderChanges{}
	if prev != nil {
		*out = *prev
	}
	for _, name := range f.Remove {
		if request && strings.EqualFold(name, "host") {
			return prev, fmt.Errorf("the Host header cannot be removed")
		}
		out.Remove = append(out.Remove, strings.ToLower(name))
	}
	for _, h := range f.Set {
		if request && strings.EqualFold(string(h.Name), "host") {
			return prev, fmt.Errorf("set the Host header with URLRewrite's hostname")
		}
		out.Set = append(out.Set, ir.Header{Name: strings.ToLower(string(h.Name)), Value: h.Value})
	}
	for _, h := range f.Add {
		if request && strings.EqualFold(string(h.Name), "host") {
			return prev, fmt.Errorf("set the Host header with URLRewrite's hostname")
		}
		out.Add = append(out.Add, ir.Header{Name: strings.ToLower(string(h.Name)), Value: h.Value})
	}
	return out, nil
}

// redirect is a RequestRedirect for a match. A port given is written
// into the URL. With a scheme and no port, Gateway API wants the scheme's
// own port, and 80 and 443 not written: Envoy drops the request's port
// when it changes the scheme, which is that (an explicit 443 it would
// write). With neither, the request's own host and port are kept.
func redirect(f *gwapiv1.HTTPRequestRedirectFilter, m ir.Match) (*ir.Redirect, error) {
	out := &ir.Redirect{Code: uint32(deref(f.StatusCode, 302))}
	switch out.Code {
	case 301, 302, 303, 307, 308:
	default:
		return nil, fmt.Errorf("redirect status %d (301, 302, 303, 307 or 308)", out.Code)
	}
	if f.Scheme != nil {
		out.Scheme = *f.Scheme
	}
	if f.Port != nil {
		out.Port = uint32(*f.Port)
	}
	if f.Hostname != nil {
		out.Host = string(*f.Hostname)
	}
	if p := f.Path; p != nil {
		switch p.Type {
		case gwapiv1.FullPathHTTPPathModifier:
			if p.ReplaceFullPath == nil {
				return nil, fmt.Errorf("ReplaceFullPath without its path")
			}
			out.Path = *p.ReplaceFullPath
		case gwapiv1.PrefixMatchHTTPPathModifier:
			rw, err := prefixRewrite(p.ReplacePrefixMatch, m)
			if err != nil {
				return nil, err
			}
			out.PathRegex = rw
		default:
			return nil, fmt.Errorf("path modifier %s is not supported", p.Type)
		}
	}
	return out, nil
}

// rewrite is a URLRewrite for a match: the Host header, and the path
// (the whole of it, or the part the match's prefix matched).
func rewrite(f *gwapiv1.HTTPURLRewriteFilter, m ir.Match) (*ir.Rewrite, error) {
	out := &ir.Rewrite{}
	if f.Hostname != nil {
		out.Host = string(*f.Hostname)
	}
	if p := f.Path; p != nil {
		switch p.Type {
		case gwapiv1.FullPathHTTPPathModifier:
			if p.ReplaceFullPath == nil {
				return nil, fmt.Errorf("ReplaceFullPath without its path")
			}
			out.Regex = &ir.RegexRewrite{Pattern: "^.*$", Substitution: *p.ReplaceFullPath}
		case gwapiv1.PrefixMatchHTTPPathModifier:
			rw, err := prefixRewrite(p.ReplacePrefixMatch, m)
			if err != nil {
				return nil, err
			}
			out.Regex = rw
		default:
			return nil, fmt.Errorf("path modifier %s is not supported", p.Type)
		}
	}
	return out, nil
}

// prefixRewrite replaces the segments a PathPrefix matched, as Gateway API
// defines ReplacePrefixMatch: with /xyz, /foo/bar becomes /xyz/bar and
// /foo becomes /xyz; with /, /foo/bar becomes /bar and /foo becomes /.
// A trailing / of the replacement is dropped like the prefix's. It is an
// RE2 substitution over the whole path rather than Envoy's prefix
// rewrite, which would make //bar of the / case.
func prefixRewrite(replacement *string, m ir.Match) (*ir.RegexRewrite, error) {
	if replacement == nil {
		return nil, fmt.Errorf("ReplacePrefixMatch without its prefix")
	}
	if m.PathType != ir.PathPrefix {
		return nil, fmt.Errorf("ReplacePrefixMatch needs a PathPrefix match")
	}
	prefix := regexp.QuoteMeta(strings.TrimSuffix(m.Path, "/"))
	with := strings.TrimRight(*replacement, "/")
	if with == "" {
		return &ir.RegexRewrite{Pattern: "^" + prefix + `/?(.*)$`, Substitution: `/\1`}, nil
	}
	return &ir.RegexRewrite{Pattern: "^" + prefix + `(/.*)?$`, Substitution: with + `\1`}, nil
}
