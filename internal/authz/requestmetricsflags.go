package authz

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// RegisterFlags registers ingress-nginx's flags of its collector
// (pkg/flags/flags.go) on fs, of the same names, meanings and defaults
// (o's), into o. A list flag is comma-separated, as pflag's: its first
// use replaces the default, the next ones add to it.
func (o *RequestMetricsOptions) RegisterFlags(fs *flag.FlagSet) {
	fs.BoolVar(&o.MetricsPerHost, "metrics-per-host", o.MetricsPerHost, "Export metrics per-host.")
	fs.BoolVar(&o.MetricsPerUndefinedHost, "metrics-per-undefined-host", o.MetricsPerUndefinedHost,
		"Export metrics per-host even if the host is not defined in an ingress. Requires --metrics-per-host to be set to true.")
	fs.BoolVar(&o.ReportStatusClasses, "report-status-classes", o.ReportStatusClasses,
		"Use status classes (2xx, 3xx, 4xx and 5xx) instead of status codes in metrics.")
	fs.Var(&float64List{list: &o.TimeBuckets}, "time-buckets",
		"Set of buckets which will be used for prometheus histogram metrics such as RequestTime, ResponseTime.")
	fs.Var(&float64List{list: &o.LengthBuckets}, "length-buckets",
		"Set of buckets which will be used for prometheus histogram metrics such as RequestLength, ResponseLength.")
	fs.Var(&float64List{list: &o.SizeBuckets}, "size-buckets",
		"Set of buckets which will be used for prometheus histogram metrics such as BytesSent.")
	fs.Var(&stringList{list: &o.ExcludeMetrics}, "exclude-socket-metrics",
		"Set of socket request metrics to exclude which won't be exported nor being calculated. E.g. 'nginx_ingress_controller_requests,nginx_ingress_controller_header_duration_seconds'.")
}

// float64List is pflag's Float64Slice: "0.1,0.5,1".
type float64List struct {
	list *[]float64
	set  bool
}

func (f *float64List) String() string {
	if f.list == nil {
		return ""
	}
	s := make([]string, len(*f.list))
	for i, v := range *f.list {
		s[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}

func (f *float64List) Set(s string) error {
	var out []float64
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", part)
		}
		out = append(out, v)
	}
	if f.set {
		out = append(*f.list, out...)
	}
	*f.list, f.set = out, true
	return nil
}

// stringList is pflag's StringSlice: "a,b".
type stringList struct {
	list *[]string
	set  bool
}

func (f *stringList) String() string {
	if f.list == nil {
		return ""
	}
	return strings.Join(*f.list, ",")
}

func (f *stringList) Set(s string) error {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	if f.set {
		out = append(*f.list, out...)
	}
	*f.list, f.set = out, true
	return nil
}
