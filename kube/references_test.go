package kube

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

const referencingManifests = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  annotations:
    test.ingress-xds.io/refers-to: Secret/htpasswd,ConfigMap/settings,Secret/missing
spec:
  defaultBackend:
    service: {name: web, port: {number: 80}}
---
apiVersion: v1
kind: Secret
metadata: {name: htpasswd}
data: {auth: dXNlcjpoYXNo} # user:hash
---
apiVersion: v1
kind: Secret
metadata: {name: unreferenced}
data: {auth: b3RoZXI=}
---
apiVersion: v1
kind: Secret
metadata: {name: cert}
type: kubernetes.io/tls
data: {tls.crt: Yw==, tls.key: aw==}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {k: v}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: unused}
data: {k: v}
`

// Manifests give the same State as the cluster: TLS Secrets, and of the
// other Secrets and the ConfigMaps those the owned Ingresses refer to;
// without a References function, TLS Secrets only.
func TestManifestStateHoldsReferencedObjects(t *testing.T) {
	var objs Objects
	if err := DecodeManifests(strings.NewReader(referencingManifests), "test", &objs); err != nil {
		t.Fatal(err)
	}
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "default", Name: name} }
	filter := ClassFilter{WatchClassless: true}

	st := objs.StateWith(filter, testReferences)
	if len(st.Secrets) != 2 || st.Secrets[key("cert")] == nil || string(st.Secrets[key("htpasswd")].Data["auth"]) != "user:hash" {
		t.Errorf("secrets = %v, want cert and htpasswd", st.Secrets)
	}
	if len(st.ConfigMaps) != 1 || st.ConfigMaps[key("settings")].Data["k"] != "v" {
		t.Errorf("config maps = %v, want settings", st.ConfigMaps)
	}

	plain := objs.State(filter)
	if len(plain.Secrets) != 1 || plain.Secrets[key("cert")] == nil || len(plain.ConfigMaps) != 0 {
		t.Errorf("without references: secrets %v, config maps %v, want cert alone", plain.Secrets, plain.ConfigMaps)
	}

	// An Ingress we do not own refers to nothing.
	theirs := objs.StateWith(ClassFilter{}, testReferences)
	if len(theirs.Ingresses) != 0 || len(theirs.Secrets) != 1 || len(theirs.ConfigMaps) != 0 {
		t.Errorf("with the Ingress not ours: %d ingresses, secrets %v, config maps %v", len(theirs.Ingresses), theirs.Secrets, theirs.ConfigMaps)
	}
}
