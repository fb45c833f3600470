package gatewayconformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/gateway-api/pkg/features"
)

// safeUpgrades is the admission policy the standard channel's install
// carries (deploy/gateway-api/), which refuses experimental CRDs over
// standard ones unless it is taken off first, as its message says.
const safeUpgrades = "safe-upgrades.gateway.networking.k8s.io"

// useExperimentalChannel replaces the cluster's Gateway API CRDs with the
// experimental channel's of the same version, read from dir (run.sh: the
// module's config/crd/experimental), so that the suite can test what only
// that channel's schema carries (an HTTPRoute rule's retry: the standard
// CRD prunes it). deploy/ and the chart keep installing the standard
// channel; a user who wants those fields installs the experimental one, as
// this does (docs/gateway-api.md, "Conformance").
func useExperimentalChannel(t *testing.T, c client.Client, dir string) {
	t.Helper()
	ctx := t.Context()
	for _, kind := range []string{"ValidatingAdmissionPolicyBinding", "ValidatingAdmissionPolicy"} {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: kind})
		u.SetName(safeUpgrades)
		if err := c.Delete(ctx, u); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("deleting %s %s: %v", kind, safeUpgrades, err)
		}
	}
	crds, err := readCRDs(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range crds {
		// The API server's admission sees the policy gone a moment after
		// it is: until then it still refuses.
		var last error
		err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			last = c.Apply(ctx, client.ApplyConfigurationFromUnstructured(crd), client.FieldOwner("ingress-xds-conformance"), client.ForceOwnership)
			if last != nil && strings.Contains(last.Error(), safeUpgrades) {
				return false, nil
			}
			return last == nil, last
		})
		if err != nil {
			t.Fatalf("applying CRD %s: %v (last: %v)", crd.GetName(), err, last)
		}
	}
	// The suite reads the channel off the CRDs, and Routes written before
	// a CRD is established again would be refused.
	for _, crd := range crds {
		err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			var got apiextensionsv1.CustomResourceDefinition
			if err := c.Get(ctx, client.ObjectKey{Name: crd.GetName()}, &got); err != nil {
				return false, err
			}
			return established(&got) && got.Annotations["gateway.networking.k8s.io/channel"] == "experimental", nil
		})
		if err != nil {
			t.Fatalf("CRD %s not established on the experimental channel: %v", crd.GetName(), err)
		}
	}
	t.Logf("Gateway API CRDs: the experimental channel's, %d from %s", len(crds), dir)
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, cond := range crd.Status.Conditions {
		if cond.Type == apiextensionsv1.Established {
			return cond.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

// readCRDs decodes every CustomResourceDefinition of dir's YAML files.
func readCRDs(dir string) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var crds []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var obj map[string]any
			if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			u := &unstructured.Unstructured{Object: obj}
			if obj != nil && u.GetKind() == "CustomResourceDefinition" {
				crds = append(crds, u)
			}
		}
	}
	if len(crds) == 0 {
		return nil, fmt.Errorf("no CustomResourceDefinition in %s", dir)
	}
	return crds, nil
}

// withoutExperimentalFeatures drops from what options.yaml claims the
// features Gateway API ties to the experimental channel, for a run on the
// standard channel's CRDs, where their fields may not reach the controller.
func withoutExperimentalFeatures(t *testing.T, claimed []features.FeatureName) []features.FeatureName {
	t.Helper()
	return slices.DeleteFunc(claimed, func(name features.FeatureName) bool {
		if features.GetFeature(name).Channel != features.FeatureChannelExperimental {
			return false
		}
		t.Logf("standard channel: %s not claimed", name)
		return true
	})
}
