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
// Each publish keeps only what it used.
type snapshotter struct {
	seen map[proto.Message]resourceInfo
	next map[proto.Message]resourceInfo
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

func (s *snapshotter) begin() {
	if s.next == nil {
		s.next = make(map[proto.Message]resourceInfo, len(s.seen))
	}
}

func (s *snapshotter) commit() {
	if s.next != nil {
		s.seen, s.next = s.next, nil
	}
}

// validate runs Envoy's field validation on every resource.
func (s *snapshotter) validate(r *translate.Resources) error {
	s.begin()
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
	s.begin()
	defer s.commit()
	snap := &cache.Snapshot{VersionMap: map[string]map[string]string{}}
	for _, t := range typedResources(r) {
		versions := make(map[string]string, len(t.items))
		h := sha256.New()
		for _, item := range t.items {
			name := cache.GetResourceName(item)
			info := s.info(item)
			if info.hash == "" {
				return nil, fmt.Errorf("%s %q: %w", t.typeURL, name, info.err)
			}
			versions[name] = info.hash
			writeField(h, name)
			writeField(h, info.hash)
		}
		snap.Resources[cache.GetResponseType(t.typeURL)] = cache.NewResources(hex.EncodeToString(h.Sum(nil))[:16], t.items)
		snap.VersionMap[t.typeURL] = versions
	}
	if err := snap.Consistent(); err != nil {
		return nil, fmt.Errorf("inconsistent snapshot: %w", err)
	}
	return snap, nil
}

// info returns a message's hash and validation result, computing them once.
func (s *snapshotter) info(m proto.Message) resourceInfo {
	if info, ok := s.next[m]; ok {
		return info
	}
	info, ok := s.seen[m]
	if !ok {
		if rc, isRoute := m.(*routev3.RouteConfiguration); isRoute {
			info = s.routeConfigurationInfo(rc)
		} else {
			info = messageInfo(m)
		}
	}
	s.next[m] = info
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
