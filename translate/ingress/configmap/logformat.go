package configmap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// DefaultLogFormat is ingress-nginx's log-format-upstream (its
// config.go's logFormatUpstream).
const DefaultLogFormat = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" ` +
	`$request_length $request_time [$proxy_upstream_name] [$proxy_alternative_upstream_name] $upstream_addr $upstream_response_length ` +
	`$upstream_response_time $upstream_status $req_id`

// routeMetadataOperator starts the command operator of a route metadata
// key the renderer writes (ir.RouteLog).
const routeMetadataOperator = "%METADATA(ROUTE:" + ir.RouteMetadata + ":"

// routeMeta is the command operator of a route metadata key.
func routeMeta(key string) string { return routeMetadataOperator + key + ")%" }

// celSeconds is a CEL expression's duration in seconds with milliseconds,
// as nginx writes its times ("0.005").
func celSeconds(duration string) string {
	ms := duration + ".getMilliseconds()"
	return "%CEL(string(" + ms + " / 1000) + '.' + string(1000 + " + ms + " % 1000).substring(1))%"
}

// logVariable is an nginx variable's Envoy command operator.
func logVariable(name string) (string, bool) {
	switch name {
	case "remote_addr", "binary_remote_addr":
		return "%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%", true
	case "realip_remote_addr":
		return "%DOWNSTREAM_DIRECT_REMOTE_ADDRESS_WITHOUT_PORT%", true
	case "remote_user":
		// The user of the request's Basic credentials, which the
		// authorisation service tells Envoy on the routes with basic
		// authentication.
		return "%DYNAMIC_METADATA(" + authzapi.MetadataNamespace + ":" + authzapi.RemoteUser + ")%", true
	case "remote_port":
		return "%DOWNSTREAM_REMOTE_PORT%", true
	case "server_addr":
		return "%DOWNSTREAM_LOCAL_ADDRESS_WITHOUT_PORT%", true
	case "server_port":
		return "%DOWNSTREAM_LOCAL_PORT%", true
	case "time_local":
		return "%START_TIME(%d/%b/%Y:%H:%M:%S %z)%", true
	case "time_iso8601":
		return "%START_TIME(%Y-%m-%dT%H:%M:%S%z)%", true
	case "msec":
		return "%START_TIME(%s.%3f)%", true
	case "request":
		return "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%", true
	case "request_method":
		return "%REQ(:METHOD)%", true
	case "request_uri":
		return "%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%", true
	case "uri", "document_uri":
		return "%PATH(NQ)%", true
	case "args", "query_string":
		return "%CEL(request.query)%", true
	case "server_protocol":
		return "%PROTOCOL%", true
	case "scheme":
		return "%REQ(:SCHEME)%", true
	case "host", "http_host":
		return "%REQ(:AUTHORITY)%", true
	case "status":
		return "%RESPONSE_CODE%", true
	case "body_bytes_sent":
		return "%BYTES_SENT%", true
	case "bytes_sent":
		return "%DOWNSTREAM_WIRE_BYTES_SENT%", true
	case "request_length":
		return "%DOWNSTREAM_WIRE_BYTES_RECEIVED%", true
	case "request_time":
		return celSeconds("request.duration"), true
	case "upstream_response_time":
		// Envoy's durations are whole milliseconds, where nginx writes
		// seconds ("0.005"); CEL has the request's duration, not the
		// upstream's.
		return "%COMMON_DURATION(US_TX_BEG:US_RX_END:ms)%", true
	case "upstream_addr":
		return "%UPSTREAM_HOST%", true
	case "upstream_status":
		// The upstream's status when one answered: "-" for Envoy's own
		// answers, as nginx's for its own.
		return "%CEL(upstream.address == '' ? '-' : string(response.code))%", true
	case "upstream_response_length":
		return "%CEL(upstream.address == '' ? '-' : string(response.size))%", true
	case "proxy_upstream_name":
		// The route's metadata where it has the name; otherwise its
		// cluster's name says it (ir.ClusterName: namespace/service/port,
		// then a policy's hash), which saves most routes the metadata.
		m := "xds.route_metadata.filter_metadata"
		cluster := func(i int) string { return "xds.cluster_name.split('/')[" + strconv.Itoa(i) + "]" }
		return "%CEL(('" + ir.RouteMetadata + "' in " + m + " && '" + ir.MetaUpstream + "' in " + m + "['" + ir.RouteMetadata + "']) ? " +
			m + "['" + ir.RouteMetadata + "']." + ir.MetaUpstream + " : " + cluster(0) + " + '-' + " + cluster(1) + " + '-' + " + cluster(2) + ")%", true
	case "proxy_alternative_upstream_name":
		// Only a canary's routes have the key: the others are empty, as
		// nginx's variable.
		fm := "xds.route_metadata.filter_metadata"
		m := fm + "['" + ir.RouteMetadata + "']"
		return "%CEL('" + ir.RouteMetadata + "' in " + fm + " && '" + ir.MetaCanaryCluster + "' in " + m + " && xds.cluster_name == " + m + "." + ir.MetaCanaryCluster + " ? " + m + "." + ir.MetaCanaryUpstream + " : '')%", true
	case "namespace":
		return routeMeta(ir.MetaNamespace), true
	case "ingress_name":
		return routeMeta(ir.MetaIngress), true
	case "service_name":
		return routeMeta(ir.MetaService), true
	case "service_port":
		return routeMeta(ir.MetaServicePort), true
	case "req_id", "request_id":
		return "%REQ(X-REQUEST-ID)%", true
	case "ssl_protocol":
		return "%DOWNSTREAM_TLS_VERSION%", true
	case "ssl_cipher":
		return "%DOWNSTREAM_TLS_CIPHER%", true
	case "ssl_server_name":
		return "%REQUESTED_SERVER_NAME%", true
	case "connection":
		return "%CONNECTION_ID%", true
	case "hostname":
		return "%HOSTNAME%", true
	}
	if h, ok := strings.CutPrefix(name, "http_"); ok && h != "" {
		return "%REQ(" + strings.ReplaceAll(h, "_", "-") + ")%", true
	}
	if h, ok := strings.CutPrefix(name, "sent_http_"); ok && h != "" {
		return "%RESP(" + strings.ReplaceAll(h, "_", "-") + ")%", true
	}
	if c, ok := strings.CutPrefix(name, "cookie_"); ok && c != "" {
		return "%CEL(request.headers['cookie'].split(';').map(c, c.trim()).filter(c, c.startsWith('" + c + "=')).map(c, c.substring(" +
			strconv.Itoa(len(c)+1) + "))[0])%", true
	}
	return "", false
}

// logFormat is an nginx log_format read: its text and variables in order.
type logFormat struct {
	// parts alternate text and variables: parts[i] is a variable's name
	// for odd i.
	parts []string
}

// parseLogFormat splits an nginx log_format into its text and variables,
// and names (each once, in order) the variables without an Envoy form.
// Bytes that are not UTF-8 have none: Envoy's configuration is text.
func parseLogFormat(format string) (logFormat, []string) {
	if !utf8.ValidString(format) {
		return logFormat{}, []string{"bytes that are not UTF-8"}
	}
	var f logFormat
	var missing []string
	var text strings.Builder
	for i := 0; i < len(format); {
		c := format[i]
		if c != '$' {
			text.WriteByte(c)
			i++
			continue
		}
		name, next := variableAt(format, i+1)
		if name == "" {
			text.WriteByte(c)
			i++
			continue
		}
		if _, ok := logVariable(name); !ok && !slices.Contains(missing, "$"+name) {
			missing = append(missing, "$"+name)
		}
		f.parts = append(f.parts, text.String(), name)
		text.Reset()
		i = next
	}
	f.parts = append(f.parts, text.String())
	return f, missing
}

// text is the format in Envoy's command operators, with its newline.
func (f logFormat) text() string {
	var b strings.Builder
	for i, p := range f.parts {
		if i%2 == 0 {
			b.WriteString(strings.ReplaceAll(p, "%", "%%"))
			continue
		}
		op, _ := logVariable(p)
		b.WriteString(op)
	}
	b.WriteByte('\n')
	return b.String()
}

// uses says whether some variable of the format is one of names.
func (f logFormat) uses(names ...string) bool {
	for i := 1; i < len(f.parts); i += 2 {
		if slices.Contains(names, f.parts[i]) {
			return true
		}
	}
	return false
}

// jsonMarker brackets a variable's index in the JSON read of a format.
const jsonMarker = "\x00"

// json is the format as Envoy's json_format (log-format-escape-json): the
// format must be a JSON object once its variables are values. A variable
// inside a JSON string becomes part of that string's Envoy format; one
// standing alone outside any string (`"status": $status`) is its command
// operator alone. Envoy writes a value that is one operator alone as a
// typed value (a number for $status, null when it has none), where nginx
// writes the text of the variable, "" when it has none. The result is the
// object as JSON, its string values Envoy format strings; an error when
// the format is no JSON object.
func (f logFormat) json() (string, error) {
	var b strings.Builder
	inString, escaped := false, false
	for i, p := range f.parts {
		if i%2 == 1 {
			// A NUL, which JSON text can only hold escaped, and so never
			// the format's own text, brackets the variable's index.
			marker := `\u0000` + strconv.Itoa(i) + `\u0000`
			if !inString {
				marker = `"` + marker + `"`
			}
			b.WriteString(marker)
			continue
		}
		for j := 0; j < len(p); j++ {
			c := p[j]
			switch {
			case escaped:
				escaped = false
			case inString && c == '\\':
				escaped = true
			case c == '"':
				inString = !inString
			}
			b.WriteByte(c)
		}
	}
	dec := json.NewDecoder(strings.NewReader(b.String()))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("not a JSON object once its variables are values: %v", err)
	}
	if dec.More() {
		return "", fmt.Errorf("not one JSON object: text after it")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return "", fmt.Errorf("not a JSON object")
	}
	out, err := f.jsonValues(obj)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// jsonValues makes a JSON object's string values Envoy format strings.
func (f logFormat) jsonValues(obj map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		switch v := v.(type) {
		case map[string]any:
			inner, err := f.jsonValues(v)
			if err != nil {
				return nil, err
			}
			out[k] = inner
		case string:
			out[k] = f.jsonString(v)
		case nil:
			return nil, fmt.Errorf("%q: null, which Envoy's JSON format cannot write", k)
		case []any:
			return nil, fmt.Errorf("%q: a list, which Envoy's JSON format cannot write", k)
		default:
			out[k] = v
		}
	}
	return out, nil
}

// jsonString is a JSON string of the format (markers for its variables)
// in Envoy's command operators.
func (f logFormat) jsonString(s string) string {
	var b strings.Builder
	pieces := strings.Split(s, jsonMarker)
	for i, p := range pieces {
		if i%2 == 0 {
			b.WriteString(strings.ReplaceAll(p, "%", "%%"))
			continue
		}
		n, _ := strconv.Atoi(p)
		op, _ := logVariable(f.parts[n])
		b.WriteString(op)
	}
	return b.String()
}

// variableAt reads the variable name at format[i:], "name" or "{name}",
// and where the text after it starts; "" when none is there.
func variableAt(format string, i int) (string, int) {
	isName := func(c byte) bool {
		return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	if i < len(format) && format[i] == '{' {
		end := strings.IndexByte(format[i:], '}')
		if end < 2 || strings.IndexFunc(format[i+1:i+end], func(r rune) bool { return r > 127 || !isName(byte(r)) }) >= 0 {
			return "", i
		}
		return strings.ToLower(format[i+1 : i+end]), i + end + 1
	}
	j := i
	for j < len(format) && isName(format[j]) {
		j++
	}
	return strings.ToLower(format[i:j]), j
}
