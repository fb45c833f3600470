package xds

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/ingress-xds/ingress-xds/translate"
)

// snapshotter validates, hashes and assembles snapshots, remembering the
// result for every message it has seen. The translator hands out the very
// same message for a resource that did not change, so a publish only
// encodes, hashes and validates what is new: at 10,000 Ingresses that is the
// difference between re-encoding 200,000 resources per change and a handful.
//
// The route configuration is rebuilt on every change but made of remembered
// virtual hosts, so it is validated and hashed through them.
//
// The remembered results are kept in place and pruned of messages no longer
// published once those are half of them. A type whose content did not change
// reuses the previous snapshot's indexes, which go-control-plane never
// writes to, so a change to one type costs nothing for the others.
type snapshotter struct {
	seen map[proto.Message]resourceInfo
	prev [cacheTypes]typeSnapshot
	// routes holds the route configurations' results within one publish.
	routes map[*routev3.RouteConfiguration]resourceInfo
}

// cacheTypes is the number of resource types a go-control-plane snapshot has.
const cacheTypes = len(cache.Snapshot{}.Resources)

type typeSnapshot struct {
	resources cache.Resources
	versions  map[string]string
}

type resourceInfo struct {
	hash string
	err  error
}

func newSnapshotter() *snapshotter {
	return &snapshotter{seen: map[proto.Message]resourceInfo{}}
}

// build validates r and turns it into a snapshot.
func (s *snapshotter) build(r *translate.Resources) (*cache.Snapshot, error) {
	if err := s.validate(r); err != nil {
		return nil, err
	}
	return s.snapshot(r)
}

// validate runs Envoy's field validation on every resource.
func (s *snapshotter) validate(r *translate.Resources) error {
	s.routes = map[*routev3.RouteConfiguration]resourceInfo{}
	var errs []error
	for _, t := range typedResources(r) {
		for _, item := range t.items {
			if err := s.info(item).err; err != nil {
				errs = append(errs, fmt.Errorf("%s %q: %w", t.typeURL, cache.GetResourceName(item), err))
			}
		}
	}
	return errors.Join(errs...)
}

// snapshot assembles a consistent snapshot with content-derived versions,
// per type and per resource (the latter for delta xDS, filled in here so that
// the cache never encodes everything again to compute them).
func (s *snapshotter) snapshot(r *translate.Resources) (*cache.Snapshot, error) {
	if s.routes == nil {
		s.routes = map[*routev3.RouteConfiguration]resourceInfo{}
	}
	defer func() { s.routes = nil }()
	snap := &cache.Snapshot{VersionMap: map[string]map[string]string{}}
	live := 0
	var hashes []string
	for _, t := range typedResources(r) {
		live += len(t.items)
		hashes = hashes[:0]
		h := sha256.New()
		for _, item := range t.items {
			info := s.info(item)
			if info.hash == "" {
				return nil, fmt.Errorf("%s %q: %w", t.typeURL, cache.GetResourceName(item), info.err)
			}
			hashes = append(hashes, info.hash)
			writeField(h, cache.GetResourceName(item))
			writeField(h, info.hash)
		}
		version := hex.EncodeToString(h.Sum(nil))[:16]
		i := cache.GetResponseType(t.typeURL)
		if prev := s.prev[i]; prev.versions == nil || prev.resources.Version != version {
			versions := make(map[string]string, len(t.items))
			for j, item := range t.items {
				versions[cache.GetResourceName(item)] = hashes[j]
			}
			s.prev[i] = typeSnapshot{resources: cache.NewResources(version, t.items), versions: versions}
		}
		snap.Resources[i] = s.prev[i].resources
		snap.VersionMap[t.typeURL] = s.prev[i].versions
	}
	if err := snap.Consistent(); err != nil {
		return nil, fmt.Errorf("inconsistent snapshot: %w", err)
	}
	s.prune(r, live)
	return snap, nil
}

// prune forgets messages no longer published, once they are half of what is
// remembered. Virtual hosts are remembered beside their route
// configurations, so they count too.
func (s *snapshotter) prune(r *translate.Resources, live int) {
	for _, rc := range r.Routes {
		live += len(rc.VirtualHosts)
	}
	if len(s.seen) <= 2*live+1024 {
		return
	}
	kept := make(map[proto.Message]resourceInfo, live)
	keep := func(m proto.Message) {
		if info, ok := s.seen[m]; ok {
			kept[m] = info
		}
	}
	for _, t := range typedResources(r) {
		for _, item := range t.items {
			keep(item)
		}
	}
	for _, rc := range r.Routes {
		for _, vh := range rc.VirtualHosts {
			keep(vh)
		}
	}
	s.seen = kept
}

// info returns a message's hash and validation result, computing them once.
// Route configurations are the exception: the translator assembles a new
// one on every change, so it is not remembered (that would keep every past
// one alive), only the virtual hosts it is made of; a publish computes it
// once for validation and once for the snapshot.
func (s *snapshotter) info(m proto.Message) resourceInfo {
	if rc, isRoute := m.(*routev3.RouteConfiguration); isRoute {
		info, ok := s.routes[rc]
		if !ok {
			info = s.routeConfigurationInfo(rc)
			if s.routes != nil {
				s.routes[rc] = info
			}
		}
		return info
	}
	info, ok := s.seen[m]
	if !ok {
		info = messageInfo(m)
		s.seen[m] = info
	}
	return info
}

// routeConfigurationInfo validates a route configuration through its
// (remembered) virtual hosts and the rest of the message. Its hash is that of
// the whole encoding: go-control-plane puts exactly that hash on the wire as
// the delta version, and CSDS compares what Envoy ACKed with it.
func (s *snapshotter) routeConfigurationInfo(rc *routev3.RouteConfiguration) resourceInfo {
	errs := []error{validateMessage(withoutField(rc, "virtual_hosts"))}
	for _, vh := range rc.VirtualHosts {
		if err := s.info(vh).err; err != nil {
			errs = append(errs, fmt.Errorf("virtual host %q: %w", vh.GetName(), err))
		}
	}
	info := hashMessage(rc)
	info.err = errors.Join(append(errs, info.err)...)
	return info
}

// messageInfo validates and hashes one message from scratch.
func messageInfo(m proto.Message) resourceInfo {
	info := hashMessage(m)
	info.err = errors.Join(validateMessage(m), info.err)
	return info
}

func validateMessage(m proto.Message) error {
	if v, ok := m.(validatable); ok {
		return v.ValidateAll()
	}
	return nil
}

// hashMessage hashes a message the way go-control-plane versions resources
// for delta xDS, so that our versions and the ones on the wire agree.
func hashMessage(m proto.Message) resourceInfo {
	raw, err := cache.MarshalResource(m)
	if err != nil {
		return resourceInfo{err: fmt.Errorf("encoding: %w", err)}
	}
	return resourceInfo{hash: cache.HashResource(raw)}
}

// withoutField returns a shallow copy of m without one field; the other
// fields share m's values, so it must only be read.
func withoutField(m proto.Message, field protoreflect.Name) proto.Message {
	src := m.ProtoReflect()
	dst := src.New()
	src.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Name() != field {
			dst.Set(fd, v)
		}
		return true
	})
	return dst.Interface()
}

// writeField writes a length-prefixed string, so that field boundaries are
// part of the hash.
func writeField(h hash.Hash, s string) {
	fmt.Fprintf(h, "%d:%s", len(s), s)
}
