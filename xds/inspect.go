package xds

import (
	"context"
	"fmt"
	"slices"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/anypb"

	inspectv1 "github.com/ingress-xds/ingress-xds/xds/inspect/v1"
)

// inspectorServer shows the snapshot being served, as it is served, with
// private keys redacted.
type inspectorServer struct {
	inspectv1.UnimplementedInspectorServer
	s *Server
}

func (i *inspectorServer) GetSnapshot(_ context.Context, req *inspectv1.GetSnapshotRequest) (*inspectv1.GetSnapshotResponse, error) {
	typeURLs := servedTypes
	if len(req.GetTypes()) > 0 {
		typeURLs = nil
		for _, name := range req.GetTypes() {
			t, ok := typeURLOf(name)
			if !ok {
				return nil, status.Errorf(codes.InvalidArgument, "unknown resource type %q: use listener, route, cluster, endpoint, secret or a type URL", name)
			}
			typeURLs = append(typeURLs, t)
		}
	}
	snap := i.s.Snapshot()
	if snap == nil {
		return &inspectv1.GetSnapshotResponse{}, nil
	}
	resp := &inspectv1.GetSnapshotResponse{Published: true}
	for _, t := range typeURLs {
		ts := &inspectv1.TypeSnapshot{TypeUrl: t, Version: snap.GetVersion(t)}
		versions := snap.GetVersionMap(t)
		for _, name := range sortedNames(snap.GetResources(t)) {
			if len(req.GetNames()) > 0 && !slices.Contains(req.GetNames(), name) {
				continue
			}
			r := &inspectv1.Resource{Name: name, Version: versions[name]}
			if !req.GetVersionsOnly() {
				a, err := inspectable(t, snap.GetResources(t)[name])
				if err != nil {
					return nil, status.Errorf(codes.Internal, "encoding %s %q: %v", t, name, err)
				}
				r.Resource = a
			}
			ts.Resources = append(ts.Resources, r)
		}
		resp.Types = append(resp.Types, ts)
	}
	return resp, nil
}

// inspectable wraps a resource for display, redacting secrets first.
func inspectable(typeURL string, r types.Resource) (*anypb.Any, error) {
	if typeURL == resource.SecretType {
		secret, ok := r.(*tlsv3.Secret)
		if !ok {
			return nil, fmt.Errorf("secret of unexpected type %T", r)
		}
		r = redactSecret(secret)
	}
	if typeURL == resource.ClusterType {
		// A client certificate's key may be written into a cluster
		// (proxy-ssl-secret).
		r = redactCluster(r)
	}
	if typeURL == resource.RouteType || typeURL == resource.VirtualHostType {
		// Basic authentication's password hashes travel in routes.
		r = redactRoute(r)
	}
	return anypb.New(r)
}

func sortedNames(m map[string]types.Resource) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
