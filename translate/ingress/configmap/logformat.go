package configmap

import (
	"slices"
	"strings"
)

// DefaultLogFormat is ingress-nginx's log-format-upstream (its
// config.go's logFormatUpstream).
const DefaultLogFormat = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" ` +
	`$request_length $request_time [$proxy_upstream_name] [$proxy_alternative_upstream_name] $upstream_addr $upstream_response_length ` +
	`$upstream_response_time $upstream_status $req_id`

// logVariable is an nginx variable's Envoy command operator.
func logVariable(name string) (string, bool) {
	switch name {
	case "remote_addr", "binary_remote_addr", "realip_remote_addr":
		if name == "realip_remote_addr" {
			return "%DOWNSTREAM_DIRECT_REMOTE_ADDRESS_WITHOUT_PORT%", true
		}
		return "%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%", true
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
		// Milliseconds, where nginx writes seconds ("0.005").
		return "%DURATION%", true
	case "upstream_response_time":
		return "%RESPONSE_DURATION%", true
	case "upstream_addr":
		return "%UPSTREAM_HOST%", true
	case "upstream_status":
		return "%RESPONSE_CODE%", true
	case "upstream_response_length":
		return "%UPSTREAM_WIRE_BYTES_RECEIVED%", true
	case "proxy_upstream_name":
		return "%UPSTREAM_CLUSTER%", true
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
	return "", false
}

// translateLogFormat is an nginx log_format in Envoy's command operators,
// variable by variable, with its newline; the variables without an Envoy
// form (each named once, in order) are written as "-", as nginx writes an
// empty value.
func translateLogFormat(format string) (string, []string) {
	var b strings.Builder
	var missing []string
	for i := 0; i < len(format); {
		c := format[i]
		if c == '%' {
			b.WriteString("%%")
			i++
			continue
		}
		if c != '$' {
			b.WriteByte(c)
			i++
			continue
		}
		name, next := variableAt(format, i+1)
		if name == "" {
			b.WriteByte(c)
			i++
			continue
		}
		if op, ok := logVariable(name); ok {
			b.WriteString(op)
		} else {
			b.WriteByte('-')
			if !slices.Contains(missing, "$"+name) {
				missing = append(missing, "$"+name)
			}
		}
		i = next
	}
	b.WriteByte('\n')
	return b.String(), missing
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
