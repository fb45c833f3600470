package configmap

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/translate/ingress/snippet"
)

// headerMapKeys are the keys whose value names a ConfigMap of headers,
// namespace/name (ingress-nginx's nginx.go reads it from its store by
// that key).
var headerMapKeys = []string{"add-headers", "proxy-set-headers"}

// NamedConfigMaps are the ConfigMaps a controller ConfigMap's data names
// (add-headers, proxy-set-headers), for kube to keep and watch: those
// named namespace/name; another value names none.
func NamedConfigMaps(data map[string]string) []types.NamespacedName {
	var out []types.NamespacedName
	for _, k := range headerMapKeys {
		if n, err := configMapRef(data[k]); err == nil && n.Name != "" {
			out = append(out, n)
		}
	}
	return out
}

// configMapRef reads a value naming a ConfigMap: namespace/name, or empty
// for none.
func configMapRef(value string) (types.NamespacedName, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return types.NamespacedName{}, nil
	}
	ns, name, ok := strings.Cut(value, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		// ingress-nginx looks the value up as its store's key,
		// namespace/name, and finds nothing otherwise.
		return types.NamespacedName{}, fmt.Errorf("not namespace/name, so no ConfigMap is found (as in ingress-nginx): no headers")
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

func headerMapKey(field func(*Settings) *types.NamespacedName) func(*Table, *Settings, string, string) error {
	return func(_ *Table, s *Settings, _, value string) error {
		n, err := configMapRef(value)
		*field(s) = n
		return err
	}
}

// ReadHeaderMaps reads the ConfigMaps of headers the keys name through
// data (false: there is none), as ingress-nginx reads them when it
// writes its configuration: AddHeaders and ProxySetHeaders. A ConfigMap
// that is not there gives no headers (ingress-nginx warns and writes
// none); one with a header that is not translated whole is an issue and
// gives none either, as a key's value that is not applied.
func (s *Settings) ReadHeaderMaps(data func(types.NamespacedName) (map[string]string, bool)) {
	s.AddHeaders, s.ProxySetHeaders = nil, nil
	read := func(key string, from types.NamespacedName) (map[string]string, bool) {
		if from.Name == "" {
			return nil, false
		}
		headers, ok := data(from)
		if !ok {
			s.Issues = append(s.Issues, Issue{Key: key, Reason: "ConfigMapNotFound",
				Message: fmt.Sprintf("%s=%q: no such ConfigMap: no headers, as ingress-nginx writes none", key, from.String())})
			return nil, false
		}
		return headers, len(headers) > 0
	}
	refuse := func(key string, from types.NamespacedName, err error) {
		s.Issues = append(s.Issues, Issue{Key: key, Reason: "InvalidConfigMapValue",
			Message: fmt.Sprintf("%s=%q: %v: none of its headers is applied (docs/configmap.md)", key, from.String(), err)})
	}
	if headers, ok := read("add-headers", s.addHeadersFrom); ok {
		h, err := snippet.AddHeaders(headers)
		if err != nil {
			refuse("add-headers", s.addHeadersFrom, err)
		} else {
			s.AddHeaders = h
		}
	}
	if headers, ok := read("proxy-set-headers", s.proxySetHeadersFrom); ok {
		// Checked as a location that proxies over HTTP, under the
		// ConfigMap's client address header, translates them; each
		// location translates them again for itself.
		var where snippet.Options
		if s.http != nil {
			where.ClientHeader = s.http.ClientHeader
		}
		if _, err := snippet.ProxySetHeaders(headers, where); err != nil {
			refuse("proxy-set-headers", s.proxySetHeadersFrom, err)
		} else {
			s.ProxySetHeaders = headers
		}
	}
}
