package authz

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// basicChecker is nginx's auth_basic: the request's Basic credentials
// against the route's user file.
type basicChecker struct {
	cache *verifications
}

func newBasicChecker(o CacheOptions) *basicChecker {
	return &basicChecker{cache: newVerifications(o)}
}

// unauthorizedBody is nginx's own page for 401, which clients and
// ingress-nginx's tests see.
const unauthorizedBody = "<html>\r\n<head><title>401 Authorization Required</title></head>\r\n<body>\r\n" +
	"<center><h1>401 Authorization Required</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"

func (b *basicChecker) check(_ context.Context, req *authv3.CheckRequest, ext map[string]string) (*authv3.CheckResponse, error) {
	user, password, ok := basicCredentials(req.GetAttributes().GetRequest().GetHttp().GetHeaders()["authorization"])
	if ok {
		if hash, found := lookupUser(ext[authzapi.BasicUsers], user); found {
			k := verificationKey(hash, user, password)
			if b.cache.verified(k) {
				return withRemoteUser(allowedBasic(), user), nil
			}
			if verifyPassword(hash, password) {
				b.cache.remember(k)
				return withRemoteUser(allowedBasic(), user), nil
			}
		}
	}
	denied := Denied(http.StatusUnauthorized, []*corev3.HeaderValueOption{
		Header("WWW-Authenticate", `Basic realm="`+ext[authzapi.BasicRealm]+`"`),
		Header("Content-Type", "text/html"),
	}, unauthorizedBody)
	if ok {
		// nginx's $remote_user is the credentials' user, let in or not.
		denied = withRemoteUser(denied, user)
	}
	return denied, nil
}

// withRemoteUser tells Envoy's access log the user of the request's Basic
// credentials (authzapi.RemoteUser), as nginx's $remote_user.
func withRemoteUser(resp *authv3.CheckResponse, user string) *authv3.CheckResponse {
	resp.DynamicMetadata = &structpb.Struct{Fields: map[string]*structpb.Value{authzapi.RemoteUser: structpb.NewStringValue(user)}}
	return resp
}

// allowedBasic lets the request in without its credentials: ingress-nginx
// clears the Authorization header of what it forwards (proxy_set_header
// Authorization "").
func allowedBasic() *authv3.CheckResponse {
	return Allowed("authorization")
}

// basicCredentials parses an Authorization header of the Basic scheme as
// nginx does: the scheme's name in any case, then spaces, then base64 of
// "user:password" (the user up to the first colon, never empty: nginx
// takes an empty user for no credentials).
func basicCredentials(header string) (user, password string, ok bool) {
	scheme, rest, found := strings.Cut(header, " ")
	if !found || !strings.EqualFold(scheme, "Basic") {
		return "", "", false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimLeft(rest, " "))
	if err != nil {
		return "", "", false
	}
	user, password, ok = strings.Cut(string(raw), ":")
	return user, password, ok && user != ""
}

// lookupUser finds the hash of a user in a user file as nginx reads one:
// lines of "user:hash", or "user:hash:comment"; "#" starts a comment line;
// the first line of the user wins.
func lookupUser(file, user string) (string, bool) {
	for line := range strings.Lines(file) {
		line = strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, found := strings.Cut(line, ":")
		if !found || name != user {
			continue
		}
		hash, _, _ := strings.Cut(rest, ":")
		return hash, true
	}
	return "", false
}
