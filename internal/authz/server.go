// Package authz is the authorisation service that runs beside each Envoy,
// in its pod, and that Envoy calls over ext_authz gRPC on loopback for the
// routes whose authentication Envoy cannot do faithfully by itself (basic
// authentication against htpasswd hashes of every kind users have, external
// authentication with nginx's auth_request semantics). Envoy also calls it
// over ext_proc on the routes with limit-connections, whose requests in
// flight it counts (connlimit.go), and with limit-rate-after, whose
// responses it paces (pace.go).
//
// It never talks to the control plane or to the Kubernetes API: all it needs
// for a request arrives in that request's CheckRequest, as the context
// extensions the control plane rendered into the route (package authzapi
// names them). So the control plane is never on the request path, every
// Envoy's service answers alike, and the service holds nothing but caches.
package authz

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/genproto/googleapis/rpc/status"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// checker checks a request for one kind of authentication. ext is the
// route's context extensions. It answers OK, or denied with the response the
// client gets; an error is the service's own failure (Envoy then answers
// with the filter's status_on_error).
type checker interface {
	check(ctx context.Context, req *authv3.CheckRequest, ext map[string]string) (*authv3.CheckResponse, error)
}

// Server implements Envoy's Authorization service.
type Server struct {
	authv3.UnimplementedAuthorizationServer
	log      *slog.Logger
	checkers map[string]checker
}

// Options are the service's settings.
type Options struct {
	// Cache bounds the verification cache (cache.go).
	Cache CacheOptions
}

// NewServer returns a Server with every kind of checker.
func NewServer(log *slog.Logger, o Options) *Server {
	return &Server{
		log: log,
		checkers: map[string]checker{
			authzapi.KindBasic:    newBasicChecker(o.Cache),
			authzapi.KindExternal: newExternalChecker(externalOptions{log: log}),
		},
	}
}

// Check answers one request: each kind the route names, in order, must
// allow it; the first that does not answers for all.
func (s *Server) Check(ctx context.Context, req *authv3.CheckRequest) (*authv3.CheckResponse, error) {
	ext := req.GetAttributes().GetContextExtensions()
	kinds := ext[authzapi.KeyKind]
	if kinds == "" {
		// A route that calls the service names what to check; one that
		// does not is a control-plane bug, and is refused, not let in.
		s.log.ErrorContext(ctx, "check request without a kind: refused", "path", req.GetAttributes().GetRequest().GetHttp().GetPath())
		return Denied(http.StatusInternalServerError, nil, ""), nil
	}
	if ext[authzapi.KeySatisfy] == authzapi.SatisfyAny {
		return s.checkAny(ctx, req, ext, strings.Split(kinds, ",")) // satisfy.go
	}
	var allowed *authv3.CheckResponse
	for kind := range strings.SplitSeq(kinds, ",") {
		c, ok := s.checkers[kind]
		if !ok {
			s.log.ErrorContext(ctx, "check request of an unknown kind: refused", "kind", kind)
			return Denied(http.StatusInternalServerError, nil, ""), nil
		}
		resp, err := c.check(ctx, req, ext)
		if err != nil {
			return nil, fmt.Errorf("%s authentication: %w", kind, err)
		}
		if resp.GetStatus().GetCode() != int32(code.Code_OK) {
			return resp, nil
		}
		allowed = mergeOK(allowed, resp)
	}
	return allowed, nil
}

// mergeOK adds b's header changes (and what it tells the access log) to
// a's.
func mergeOK(a, b *authv3.CheckResponse) *authv3.CheckResponse {
	if a == nil {
		return b
	}
	if a.DynamicMetadata == nil {
		a.DynamicMetadata = b.DynamicMetadata
	}
	ao, bo := a.GetOkResponse(), b.GetOkResponse()
	if bo == nil {
		return a
	}
	if ao == nil {
		return b
	}
	ao.Headers = append(ao.Headers, bo.Headers...)
	ao.HeadersToRemove = append(ao.HeadersToRemove, bo.HeadersToRemove...)
	ao.ResponseHeadersToAdd = append(ao.ResponseHeadersToAdd, bo.ResponseHeadersToAdd...)
	return a
}

// Allowed is an OK answer that removes the named request headers before
// the request goes upstream.
func Allowed(remove ...string) *authv3.CheckResponse {
	return &authv3.CheckResponse{
		Status:       &status.Status{Code: int32(code.Code_OK)},
		HttpResponse: &authv3.CheckResponse_OkResponse{OkResponse: &authv3.OkHttpResponse{HeadersToRemove: remove}},
	}
}

// Denied is an answer that Envoy sends the client instead of forwarding the
// request: the HTTP status, the headers, and the body.
func Denied(httpStatus int, headers []*corev3.HeaderValueOption, body string) *authv3.CheckResponse {
	return &authv3.CheckResponse{
		Status: &status.Status{Code: int32(code.Code_PERMISSION_DENIED)},
		HttpResponse: &authv3.CheckResponse_DeniedResponse{DeniedResponse: &authv3.DeniedHttpResponse{
			Status:  &typev3.HttpStatus{Code: typev3.StatusCode(httpStatus)},
			Headers: headers,
			Body:    body,
		}},
	}
}

// Header is one header to set on a response.
func Header(name, value string) *corev3.HeaderValueOption {
	return &corev3.HeaderValueOption{
		Header:       &corev3.HeaderValue{Key: name, Value: value},
		AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
	}
}
