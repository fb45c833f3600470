package configmap

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Markdown is docs/configmap.md: the table, as users read it.
func (t *Table) Markdown() []byte {
	var b bytes.Buffer
	b.WriteString("# The controller ConfigMap\n\n")
	b.WriteString("<!-- Generated from translate/ingress/configmap/keys.go by `make golden`; do not edit. -->\n\n")
	b.WriteString("`serve --configmap NAMESPACE/NAME` (and `translate` and `audit`, with the ConfigMap among the manifests of `-f`) " +
		"reads ingress-nginx's controller ConfigMap (its `--configmap`; the Helm chart's `controller.config`, rendered as `ingress-xds-config`). " +
		"A change to it takes effect without a restart. A ConfigMap that does not exist is no error (ingress-nginx starts without its own): " +
		"serve logs that it is not found, `/metrics` has `ingress_xds_controller_configmap_found` at 0 until it is, and it applies " +
		"the moment it is created. Below is every key of ingress-nginx's ConfigMap (its final release's " +
		"`docs/user-guide/nginx-configuration/configmap.md`, and the keys its configuration code reads beside), with what ingress-xds does with it.\n\n" +
		"A key of the same name as an annotation is that annotation's default: every Ingress that does not set the annotation gets the " +
		"ConfigMap's value, read as the annotation's would be, and an Ingress's own annotation overrides it, as in ingress-nginx " +
		"(whose annotation parsers take the ConfigMap's value as their default). Its verdict is the annotation's (docs/annotations.md).\n\n" +
		"A value that does not parse, a key that is not honoured yet, and a key ingress-nginx does not have are logged and reported as a " +
		"Warning Event on the ConfigMap, and the key is treated as unset; never an error. Where the key is an access control " +
		"(whitelist-source-range, denylist-source-range), a value that does not parse refuses every Ingress that does not set the key itself " +
		"(its paths answer 503): the Ingresses are not served open. A key marked refused is an access control ingress-xds does not apply: " +
		"while it is set, every Ingress is refused, unless `serve --unsupported-annotations=ignore` serves them without it.\n\n" +
		"Without `--configmap`, and for the keys a ConfigMap does not set, ingress-xds keeps its own defaults, which are not all ingress-nginx's " +
		"(no body limit, Envoy's 15 s route timeout, no HSTS, no redirect to HTTPS unless asked, no access log); ingress-nginx's retries " +
		"(proxy-next-upstream \"error timeout\", proxy-next-upstream-tries 3) and its 502 and 504 for a backend that cannot be reached apply always. `serve --nginx-defaults` gives every Ingress " +
		"ingress-nginx's instead, under the ConfigMap's keys: " + nginxDefaultsList() + "; it is on by default when serve takes over " +
		"ingress-nginx's Ingresses (`--controller-class k8s.io/ingress-nginx`), which were written against those defaults, unless " +
		"`--nginx-defaults=false` says otherwise. With `--configmap` or `--nginx-defaults`, an Ingress path under `/.well-known/acme-challenge` " +
		"(an ACME HTTP-01 challenge's) is never redirected to HTTPS, as in ingress-nginx (no-tls-redirect-locations), and a path " +
		"configured with a trailing slash (`/foo/`, Prefix or Exact, outside regex mode) answers `/foo` with nginx's 301 to `/foo/` " +
		"where no other path of the host is `/foo`; without either, a Prefix path's trailing slash is ignored, as Kubernetes defines Prefix.\n\n")
	b.WriteString("| key | ingress-nginx's default | verdict | note |\n|---|---|---|---|\n")
	for _, k := range t.keys {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", k.Name, cell(k.NginxDefault), k.verdictOrDefault(), cell(k.Note))
	}
	return b.Bytes()
}

// nginxDefaultsList is NginxDefaults as Markdown, sorted.
func nginxDefaultsList() string {
	d := NginxDefaults()
	var out []string
	for _, k := range slices.Sorted(maps.Keys(d)) {
		if d[k] == DefaultLogFormat {
			out = append(out, fmt.Sprintf("`%s` (its default format: an access log of every request)", k))
			continue
		}
		out = append(out, fmt.Sprintf("`%s: %s`", k, d[k]))
	}
	return strings.Join(out, ", ")
}

// cell makes text safe in a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}
