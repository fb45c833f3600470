package snippet

import (
	"strconv"
	"strings"
	"time"

	"github.com/ingress-xds/ingress-xds/translate/ingress/nginxconf"
)

// templateVariables are the variables ingress-nginx's template defines or
// sets itself (nginx.tmpl's maps and its locations' set): an http-snippet
// map to one of them would change what the template sends.
var templateVariables = []string{
	"req_id", "connection_upgrade", "pass_access_scheme", "pass_server_port", "best_http_host", "pass_port",
	"proxy_upstream_name", "proxy_alternative_upstream_name", "proxy_host", "namespace", "ingress_name",
	"service_name", "service_port", "location_path", "full_x_forwarded_for", "block_ua", "block_ref",
	"the_real_ip", "forwarded_proto", "forwarded_for",
}

// TranslateHTTP translates the ConfigMap's http-snippet. What people put
// there declares what other configuration uses: zones of limit_req and
// limit_conn, caches, maps and split_clients of variables of their own.
// A declaration alone does nothing; the directives that would use it
// (limit_req, proxy_cache, a variable nobody defines) are refused where
// they appear. So such declarations are of no effect here, and anything
// else (a server, an include, a map over one of the template's own
// variables) refuses the snippet.
func TranslateHTTP(src string) (*HTTPResult, error) {
	out := &HTTPResult{}
	ds, err := nginxconf.Parse(src)
	if err != nil {
		return out, &Refusal{Why: "not nginx syntax: " + err.Error()}
	}
	t := &translator{}
	err = t.http(ds, out)
	out.Verdicts = settle(t.verdicts)
	return out, err
}

func (t *translator) http(ds []nginxconf.Directive, out *HTTPResult) error {
	for _, d := range ds {
		if err := t.checkArgs(d); err != nil {
			return err
		}
		switch d.Name {
		case "limit_req_zone", "limit_conn_zone", "proxy_cache_path":
			if d.Block != nil {
				return t.refuse(d, "a block: nginx refuses it")
			}
			note := "it declares a zone; a directive that uses it is refused where it appears"
			if z := cacheZone(d); d.Name == "proxy_cache_path" && z != "" {
				if out.CacheZones == nil {
					out.CacheZones = map[string]bool{}
				}
				out.CacheZones[z] = true
				note = "it declares cache zone " + z + "; a proxy_cache of it is refused where it appears (caching is not translated)"
			}
			if d.Name == "limit_req_zone" {
				var z *Zone
				z, note = limitReqZone(d)
				if z != nil {
					if out.Zones == nil {
						out.Zones = map[string]Zone{}
					}
					out.Zones[z.Name] = *z
				}
			}
			t.verdict(d, NoEffect, note)
		case "map", "split_clients":
			if d.Block == nil || len(d.Args) != 2 || !strings.HasPrefix(d.Args[1], "$") {
				return t.refuse(d, "%s takes a value, a $variable and a block", d.Name)
			}
			name := strings.TrimPrefix(d.Args[1], "$")
			for _, v := range templateVariables {
				if name == v {
					return t.refuse(d, "$%s is ingress-nginx's template's own: defining it changes what the template sends, which is not translated", name)
				}
			}
			t.verdict(d, NoEffect, "it defines $"+name+", which no translated directive reads (one that does is refused where it appears)")
		default:
			return t.refuse(d, "in an http-snippet: not translated")
		}
	}
	return nil
}

// HTTPResult is what an http-snippet amounts to: its verdicts, the
// limit_req zones a location's limit_req may use, and the names of the
// cache zones its proxy_cache_path declare.
type HTTPResult struct {
	Verdicts   []Verdict
	Zones      map[string]Zone
	CacheZones map[string]bool `json:",omitempty"`
}

// cacheZone is the name of the zone a proxy_cache_path declares
// (keys_zone=name:size), or "".
func cacheZone(d nginxconf.Directive) string {
	for _, a := range d.Args {
		if v, ok := strings.CutPrefix(a, "keys_zone="); ok {
			if name, size, ok := strings.Cut(v, ":"); ok && name != "" && size != "" {
				return name
			}
		}
	}
	return ""
}

// Zone is a limit_req_zone of the http-snippet. One keyed by the client's
// address allows Requests per Period (a second or a minute) for each
// client; any other has Requests 0: nginx knows it, ingress-xds does not
// translate it.
type Zone struct {
	Name     string
	Requests uint32
	Period   time.Duration
}

// limitReqZone reads limit_req_zone $binary_remote_addr zone=name:size
// rate=Nr/s|Nr/m: the zone and the verdict's note. A zone of another key
// has no rate (Requests 0): a limit_req of it is refused where it
// appears; nil: no zone's name.
func limitReqZone(d nginxconf.Directive) (*Zone, string) {
	declared := "it declares a zone; a limit_req of it is refused where it appears (only a zone of $binary_remote_addr with a rate is translated)"
	z := &Zone{}
	for _, a := range d.Args {
		if v, ok := strings.CutPrefix(a, "zone="); ok {
			if name, size, ok := strings.Cut(v, ":"); ok && name != "" && size != "" {
				z.Name = name
			}
		}
	}
	if z.Name == "" {
		return nil, declared
	}
	unrated := &Zone{Name: z.Name}
	key := ""
	for _, a := range d.Args {
		switch {
		case strings.HasPrefix(a, "zone="):
		case strings.HasPrefix(a, "rate="):
			r := strings.TrimPrefix(a, "rate=")
			z.Period = time.Second
			if n, ok := strings.CutSuffix(r, "r/m"); ok {
				r, z.Period = n, time.Minute
			} else if n, ok := strings.CutSuffix(r, "r/s"); ok {
				r = n
			} else {
				return unrated, declared
			}
			n, err := strconv.ParseUint(r, 10, 32)
			if err != nil || n == 0 {
				return unrated, declared
			}
			z.Requests = uint32(n)
		case key == "":
			key = a
		default:
			return unrated, declared // sync, or a second key
		}
	}
	if key != "$binary_remote_addr" && key != "$remote_addr" || z.Name == "" || z.Requests == 0 {
		return unrated, declared
	}
	return z, "it declares zone " + z.Name + ", per client address, which a configuration-snippet's limit_req may use"
}
