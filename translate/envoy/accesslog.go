package envoy

import (
	"fmt"
	"strconv"
	"strings"

	accesslogv3 "github.com/envoyproxy/go-control-plane/envoy/config/accesslog/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	fileaccesslogv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/file/v3"
	celfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/filters/cel/v3"
	celformatterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/formatter/cel/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// accessLogPath is where Envoy writes the access log by default: its
// standard output, as ingress-nginx's image links its access log to its
// own.
const accessLogPath = "/dev/stdout"

// accessLogOff is the route metadata key (in ir.RouteMetadata) of a
// route whose requests are not logged (enable-access-log: false).
const accessLogOff = "access_log_off"

// celConfig lets CEL expressions make strings, which the access log's
// nginx variables need ($request_time's seconds).
func celConfig() *corev3.CelExpressionConfig {
	return &corev3.CelExpressionConfig{EnableStringConversion: true, EnableStringConcat: true, EnableStringFunctions: true}
}

// accessLog writes a line for every request but those a's filters leave
// out; offRoutes says that some route of the listener is not logged.
func accessLog(a *ir.AccessLog, offRoutes bool) (*accesslogv3.AccessLog, error) {
	format := &corev3.SubstitutionFormatString{}
	text := a.Format
	if a.JSON != "" {
		s := &structpb.Struct{}
		if err := protojson.Unmarshal([]byte(a.JSON), s); err != nil {
			return nil, fmt.Errorf("access log JSON format: %w", err)
		}
		format.Format = &corev3.SubstitutionFormatString_JsonFormat{JsonFormat: s}
		text = a.JSON
	} else {
		format.Format = &corev3.SubstitutionFormatString_TextFormatSource{TextFormatSource: &corev3.DataSource{
			Specifier: &corev3.DataSource_InlineString{InlineString: a.Format},
		}}
	}
	if strings.Contains(text, "%CEL(") {
		cel, err := anypb.New(&celformatterv3.Cel{CelConfig: celConfig()})
		if err != nil {
			return nil, fmt.Errorf("packing the CEL formatter: %w", err)
		}
		format.Formatters = []*corev3.TypedExtensionConfig{{Name: "envoy.formatter.cel", TypedConfig: cel}}
	}
	path := a.Path
	if path == "" {
		path = accessLogPath
	}
	cfg, err := anypb.New(&fileaccesslogv3.FileAccessLog{Path: path, AccessLogFormat: &fileaccesslogv3.FileAccessLog_LogFormat{LogFormat: format}})
	if err != nil {
		return nil, fmt.Errorf("packing the access log: %w", err)
	}
	filter, err := accessLogFilter(a, offRoutes)
	if err != nil {
		return nil, err
	}
	return &accesslogv3.AccessLog{Name: "envoy.access_loggers.file", Filter: filter, ConfigType: &accesslogv3.AccessLog_TypedConfig{TypedConfig: cfg}}, nil
}

// accessLogFilter leaves out the requests ingress-nginx does not log: the
// URIs skip-access-log-urls names, those for a host no virtual host
// serves (its default server's), and those of routes not logged. nil:
// every request is logged. A CEL expression that fails to evaluate (an
// attribute absent: no virtual host, no route) leaves the request out.
func accessLogFilter(a *ir.AccessLog, offRoutes bool) (*accesslogv3.AccessLogFilter, error) {
	var clauses []string
	if len(a.Skip) > 0 {
		quoted := make([]string, len(a.Skip))
		for i, s := range a.Skip {
			quoted[i] = strconv.Quote(s)
		}
		clauses = append(clauses, "!(request.path in ["+strings.Join(quoted, ", ")+"])")
	}
	for _, re := range a.SkipRegex {
		clauses = append(clauses, "!request.path.matches("+strconv.Quote(re)+")")
	}
	if !a.UnknownHosts {
		clauses = append(clauses, "xds.virtual_host_name != ''")
	}
	var filters []*accesslogv3.AccessLogFilter
	if len(clauses) > 0 {
		f, err := celFilter(strings.Join(clauses, " && "))
		if err != nil {
			return nil, err
		}
		filters = append(filters, f)
	}
	if offRoutes {
		// A request without a route (a known host's path no rule has)
		// is logged; one with a route, unless the route says it is not.
		m := "xds.route_metadata.filter_metadata"
		logged, err := celFilter(fmt.Sprintf("!('%s' in %s && '%s' in %s['%s'])", ir.RouteMetadata, m, accessLogOff, m, ir.RouteMetadata))
		if err != nil {
			return nil, err
		}
		noRoute := &accesslogv3.AccessLogFilter{FilterSpecifier: &accesslogv3.AccessLogFilter_ResponseFlagFilter{
			ResponseFlagFilter: &accesslogv3.ResponseFlagFilter{Flags: []string{"NR"}},
		}}
		filters = append(filters, &accesslogv3.AccessLogFilter{FilterSpecifier: &accesslogv3.AccessLogFilter_OrFilter{
			OrFilter: &accesslogv3.OrFilter{Filters: []*accesslogv3.AccessLogFilter{noRoute, logged}},
		}})
	}
	switch len(filters) {
	case 0:
		return nil, nil
	case 1:
		return filters[0], nil
	}
	return &accesslogv3.AccessLogFilter{FilterSpecifier: &accesslogv3.AccessLogFilter_AndFilter{AndFilter: &accesslogv3.AndFilter{Filters: filters}}}, nil
}

// celFilter is Envoy's CEL access log filter of an expression.
func celFilter(expr string) (*accesslogv3.AccessLogFilter, error) {
	cfg, err := anypb.New(&celfilterv3.ExpressionFilter{Expression: expr, CelConfig: celConfig()})
	if err != nil {
		return nil, fmt.Errorf("packing the access log's CEL filter: %w", err)
	}
	return &accesslogv3.AccessLogFilter{FilterSpecifier: &accesslogv3.AccessLogFilter_ExtensionFilter{ExtensionFilter: &accesslogv3.ExtensionFilter{
		Name: "envoy.access_loggers.extension_filters.cel", ConfigType: &accesslogv3.ExtensionFilter_TypedConfig{TypedConfig: cfg},
	}}}, nil
}

// applyRouteLog writes on the Envoy routes of an IR route (its redirects,
// CORS preflights and affinity routes too) what the access log reads of
// it: the names of its Ingress and backend (ir.RouteLog), and whether it
// is logged. It says whether the route is not logged.
func applyRouteLog(routes []*routev3.Route, r *ir.Route) filterSet {
	off := r.Policy != nil && r.Policy.NoAccessLog
	if r.Log == nil && !off {
		return 0
	}
	var uses filterSet
	if off {
		uses = useNoAccessLog
	}
	// A route to one cluster whose name says its upstream's (ir.ClusterName:
	// namespace/service/port/...) needs no upstream name of its own: the
	// access log reads the cluster's (configmap's $proxy_upstream_name).
	var full, derived *corev3.Metadata
	for _, route := range routes {
		byCluster := r.Log != nil && r.Log.Upstream != "" && upstreamOfCluster(route.GetRoute().GetCluster()) == r.Log.Upstream
		if byCluster {
			if derived == nil {
				derived = routeLogMetadata(r.Log, off, false)
			}
			route.Metadata = derived
			continue
		}
		if full == nil {
			full = routeLogMetadata(r.Log, off, true)
		}
		route.Metadata = full
	}
	return uses
}

// routeLogMetadata is the route metadata of the names l sets (the
// front-end sets those the format reads), with its upstream name or
// without, and whether the route is logged; nil when it says nothing.
func routeLogMetadata(l *ir.RouteLog, off, upstream bool) *corev3.Metadata {
	fields := map[string]*structpb.Value{}
	if l != nil {
		for _, f := range []struct{ key, value string }{
			{ir.MetaNamespace, l.Namespace}, {ir.MetaIngress, l.Ingress}, {ir.MetaService, l.Service}, {ir.MetaServicePort, l.ServicePort},
			{ir.MetaCanaryCluster, l.CanaryCluster}, {ir.MetaCanaryUpstream, l.CanaryUpstream}, {ir.MetaPath, l.Path},
		} {
			if f.value != "" {
				fields[f.key] = structpb.NewStringValue(f.value)
			}
		}
		if upstream && l.Upstream != "" {
			fields[ir.MetaUpstream] = structpb.NewStringValue(l.Upstream)
		}
	}
	if off {
		fields[accessLogOff] = structpb.NewBoolValue(true)
	}
	if len(fields) == 0 {
		return nil
	}
	return &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{ir.RouteMetadata: {Fields: fields}}}
}

// upstreamOfCluster is ingress-nginx's upstream name that a cluster's name
// says (ir.ClusterName: namespace/service/port, then a policy's hash);
// empty for a name of another form.
func upstreamOfCluster(name string) string {
	parts := strings.SplitN(name, "/", 4)
	if len(parts) < 3 {
		return ""
	}
	return parts[0] + "-" + parts[1] + "-" + parts[2]
}
