package xds

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	adminv3 "github.com/envoyproxy/go-control-plane/envoy/admin/v3"
	statusservice "github.com/envoyproxy/go-control-plane/envoy/service/status/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// csdsServer is the Client Status Discovery Service: for each connected
// Envoy, the resources it runs, the versions it ACKed, and what it NACKed
// and why. Resource contents are left out (GetSnapshot has them, with
// secrets redacted), so that a status query stays small and never shows a
// private key.
type csdsServer struct {
	statusservice.UnimplementedClientStatusDiscoveryServiceServer
	s    *Server
	done <-chan struct{} // closed when the server stops
}

func (c *csdsServer) FetchClientStatus(_ context.Context, req *statusservice.ClientStatusRequest) (*statusservice.ClientStatusResponse, error) {
	return c.s.clientStatus(req)
}

func (c *csdsServer) StreamClientStatus(stream statusservice.ClientStatusDiscoveryService_StreamClientStatusServer) error {
	reqs := make(chan *statusservice.ClientStatusRequest)
	recvErr := make(chan error, 1)
	go func() {
		for {
			req, err := stream.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			select {
			case reqs <- req:
			case <-stream.Context().Done():
				return
			}
		}
	}()
	for {
		select {
		case <-c.done:
			return nil
		case err := <-recvErr:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case req := <-reqs:
			resp, err := c.s.clientStatus(req)
			if err != nil {
				return err
			}
			if err := stream.Send(resp); err != nil {
				return err
			}
		}
	}
}

func (s *Server) clientStatus(req *statusservice.ClientStatusRequest) (*statusservice.ClientStatusResponse, error) {
	match, err := nodeMatcher(req.GetNodeMatchers())
	if err != nil {
		return nil, err
	}
	snap := s.Snapshot()
	resp := &statusservice.ClientStatusResponse{}
	for _, cl := range s.clients.list() {
		if !match(cl.node.GetId()) {
			continue
		}
		resp.Config = append(resp.Config, &statusservice.ClientConfig{
			Node:              cl.node,
			GenericXdsConfigs: genericConfigs(cl, snap),
		})
	}
	return resp, nil
}

// genericConfigs lists one entry per resource the Envoy runs or rejected,
// by type in dependency order, then by name.
func genericConfigs(cl clientView, snap *Snapshot) []*statusservice.ClientConfig_GenericXdsConfig {
	var out []*statusservice.ClientConfig_GenericXdsConfig
	for _, typeURL := range typeOrder(cl.types) {
		tv := cl.types[typeURL]
		names := make([]string, 0, len(tv.acked))
		for name := range tv.acked {
			names = append(names, name)
		}
		if tv.rejection != nil {
			for name := range tv.rejection.names {
				if _, ok := tv.acked[name]; !ok {
					names = append(names, name)
				}
			}
		}
		slices.Sort(names)
		for _, name := range names {
			g := &statusservice.ClientConfig_GenericXdsConfig{TypeUrl: typeURL, Name: name}
			if v, ok := tv.acked[name]; ok {
				g.VersionInfo = v
				g.LastUpdated = timestamppb.New(tv.ackedAt)
				g.ClientStatus = adminv3.ClientResourceStatus_ACKED
				g.ConfigStatus = syncStatus(cl.key.delta, snap, typeURL, name, v)
			}
			if r := tv.rejection; r != nil {
				if _, ok := r.names[name]; ok {
					g.ClientStatus = adminv3.ClientResourceStatus_NACKED
					g.ConfigStatus = statusservice.ConfigStatus_ERROR
					g.ErrorState = &adminv3.UpdateFailureState{
						LastUpdateAttempt: timestamppb.New(r.at),
						Details:           r.detail,
						VersionInfo:       r.version,
					}
				}
			}
			out = append(out, g)
		}
	}
	return out
}

// syncStatus says whether the version an Envoy ACKed is the one served now.
func syncStatus(delta bool, snap *Snapshot, typeURL, name, version string) statusservice.ConfigStatus {
	if snap == nil {
		return statusservice.ConfigStatus_UNKNOWN
	}
	current := snap.GetVersion(typeURL)
	if delta || !fullStateInSotw(typeURL) {
		// Versioned per resource (see resourceCache).
		current = snap.versionMapOf(typeURL, delta)[name]
	}
	if version == current {
		return statusservice.ConfigStatus_SYNCED
	}
	return statusservice.ConfigStatus_STALE
}

func typeOrder(types map[string]typeView) []string {
	var out []string
	for _, t := range servedTypes {
		if _, ok := types[t]; ok {
			out = append(out, t)
		}
	}
	var others []string
	for t := range types {
		if !slices.Contains(servedTypes, t) {
			others = append(others, t)
		}
	}
	slices.Sort(others)
	return append(out, others...)
}

// nodeMatcher implements CSDS node matchers on node ids, with OR semantics;
// no matcher matches every node.
func nodeMatcher(matchers []*matcherv3.NodeMatcher) (func(id string) bool, error) {
	if len(matchers) == 0 {
		return func(string) bool { return true }, nil
	}
	var fns []func(string) bool
	for _, m := range matchers {
		if len(m.GetNodeMetadatas()) > 0 {
			return nil, status.Error(codes.Unimplemented, "node_metadatas matchers are not supported; match on node_id")
		}
		if m.GetNodeId() == nil {
			fns = append(fns, func(string) bool { return true })
			continue
		}
		fn, err := stringMatcher(m.GetNodeId())
		if err != nil {
			return nil, status.Error(codes.InvalidArgument, err.Error())
		}
		fns = append(fns, fn)
	}
	return func(id string) bool {
		return slices.ContainsFunc(fns, func(fn func(string) bool) bool { return fn(id) })
	}, nil
}

func stringMatcher(m *matcherv3.StringMatcher) (func(string) bool, error) {
	fold := func(s string) string { return s }
	if m.GetIgnoreCase() {
		fold = strings.ToLower
	}
	switch p := m.GetMatchPattern().(type) {
	case *matcherv3.StringMatcher_Exact:
		want := fold(p.Exact)
		return func(s string) bool { return fold(s) == want }, nil
	case *matcherv3.StringMatcher_Prefix:
		want := fold(p.Prefix)
		return func(s string) bool { return strings.HasPrefix(fold(s), want) }, nil
	case *matcherv3.StringMatcher_Suffix:
		want := fold(p.Suffix)
		return func(s string) bool { return strings.HasSuffix(fold(s), want) }, nil
	case *matcherv3.StringMatcher_Contains:
		want := fold(p.Contains)
		return func(s string) bool { return strings.Contains(fold(s), want) }, nil
	case *matcherv3.StringMatcher_SafeRegex:
		re, err := regexp.Compile("^(?:" + p.SafeRegex.GetRegex() + ")$")
		if err != nil {
			return nil, fmt.Errorf("node_id regex: %w", err)
		}
		return re.MatchString, nil
	default:
		return nil, fmt.Errorf("unsupported node_id matcher %T", p)
	}
}
