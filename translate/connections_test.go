package translate_test

import (
	"math/rand"
	"strconv"
)

// toggledConnectionKey is a random value of one of the controller
// ConfigMap's keys of connections (configmap/connections.go), for the
// random incremental test: each changes the listeners or every cluster.
func toggledConnectionKey(rng *rand.Rand) (string, string) {
	n := strconv.Itoa(rng.Intn(3))
	choices := [][2]string{
		{"keep-alive", n},
		{"keep-alive-requests", n},
		{"upstream-keepalive-timeout", n},
		{"upstream-keepalive-requests", n},
		{"upstream-keepalive-connections", n},
		{"ssl-protocols", []string{"TLSv1.2", "TLSv1.3", "TLSv1 TLSv1.3"}[rng.Intn(3)]},
		{"ssl-ciphers", []string{"ECDHE-RSA-AES128-GCM-SHA256", "HIGH", "AES128-SHA:AES256-SHA"}[rng.Intn(3)]},
		{"use-http2", strconv.FormatBool(rng.Intn(2) == 0)},
		{"enable-real-ip", strconv.FormatBool(rng.Intn(2) == 0)},
		{"proxy-real-ip-cidr", []string{"10.0.0.0/8", "0.0.0.0/0", ""}[rng.Intn(3)]},
		{"forwarded-for-header", []string{"X-Forwarded-For", "CF-Connecting-IP"}[rng.Intn(2)]},
		{"compute-full-forwarded-for", strconv.FormatBool(rng.Intn(2) == 0)},
		{"log-format-upstream", []string{"$remote_addr $status", "$namespace", "[$proxy_upstream_name] [$proxy_alternative_upstream_name]", "$pid"}[rng.Intn(4)]},
		{"disable-access-log", strconv.FormatBool(rng.Intn(2) == 0)},
		{"skip-access-log-urls", []string{"/healthz", "~^/p", ""}[rng.Intn(3)]},
		{"log-format-escape-json", strconv.FormatBool(rng.Intn(2) == 0)},
		{"enable-access-log-for-default-backend", strconv.FormatBool(rng.Intn(2) == 0)},
		{"enable-opentelemetry", strconv.FormatBool(rng.Intn(2) == 0)},
		{"otlp-collector-host", []string{"10.0.0.9", "otel.example.com", ""}[rng.Intn(3)]},
		{"otel-sampler", []string{"AlwaysOn", "TraceIdRatioBased", "AlwaysOff"}[rng.Intn(3)]},
		{"opentelemetry-trust-incoming-span", strconv.FormatBool(rng.Intn(2) == 0)},
	}
	c := choices[rng.Intn(len(choices))]
	return c[0], c[1]
}
