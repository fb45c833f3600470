package deploy

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
	"github.com/ingress-xds/ingress-xds/xds/certs"
)

// TestXDSMutualTLSManifests checks the wiring of xDS over mutual TLS: serve
// reads its certificate, key and client CA from the mount of the Secret
// certgen writes for it, Envoy reads its own from the client Secret's mount
// in the envoy container (where Envoy runs, not where bootstrap runs), the
// address Envoy dials is a name the server certificate carries, the keys
// are readable by the pods' user and no one else, and nothing asks for
// plaintext.
func TestXDSMutualTLSManifests(t *testing.T) {
	m := load(t)
	ns := m.namespace.Name
	cpSpec := m.controlPlane.Spec.Template.Spec
	serve := container(t, cpSpec, "ingress-xds", false)
	dsSpec := m.envoy.Spec.Template.Spec
	boot := container(t, dsSpec, "bootstrap", true)
	envoy := container(t, dsSpec, "envoy", false)

	for _, args := range [][]string{serve.Args, boot.Args} {
		if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--insecure") }) {
			t.Errorf("%q asks for plaintext xDS", args)
		}
	}
	wantFiles := map[string]string{"xds-tls-cert": certs.CertFile, "xds-tls-key": certs.KeyFile, "xds-tls-ca": certs.CAFile}
	for _, end := range []struct {
		what   string
		args   []string
		spec   corev1.PodSpec
		reader corev1.Container
		secret string
	}{
		{"serve", serve.Args, cpSpec, serve, certs.DefaultServerSecret},
		{"bootstrap", boot.Args, dsSpec, envoy, certs.DefaultClientSecret},
	} {
		for flag, key := range wantFiles {
			file, ok := flagValue(end.args, flag)
			if !ok {
				t.Errorf("%s has no --%s", end.what, flag)
				continue
			}
			secret, gotKey, err := secretFile(end.spec, end.reader, file)
			if err != nil {
				t.Errorf("%s --%s=%s: %v", end.what, flag, file, err)
			} else if secret != end.secret || gotKey != key {
				t.Errorf("%s --%s=%s is key %q of Secret %q in container %s, want key %q of Secret %q (what certgen writes)",
					end.what, flag, file, gotKey, secret, end.reader.Name, key, end.secret)
			}
		}
	}

	// Envoy verifies the server by the host it dials unless told another
	// name: it must be one certgen puts in the server certificate.
	name, ok := flagValue(boot.Args, "xds-server-name")
	if !ok {
		addr, _ := flagValue(boot.Args, "xds-address")
		name, _, _ = net.SplitHostPort(addr)
	}
	if !slices.Contains(certs.DefaultServerHosts(ns), name) {
		t.Errorf("envoy verifies the xDS server as %q, which is not among the names certgen gives it by default: %v", name, certs.DefaultServerHosts(ns))
	}

	// The Secret's files are root's; the pods run as another user, who
	// reads them as their group (fsGroup), and others cannot.
	for _, pod := range []struct {
		name string
		spec corev1.PodSpec
	}{{"control plane", cpSpec}, {"envoy", dsSpec}} {
		psc := pod.spec.SecurityContext
		if psc == nil || psc.FSGroup == nil || psc.RunAsGroup == nil || *psc.FSGroup != *psc.RunAsGroup {
			t.Errorf("%s pods: fsGroup must be the group the pod runs as, to read the mounted key: %+v", pod.name, psc)
		}
		for _, v := range pod.spec.Volumes {
			if v.Secret == nil {
				continue
			}
			mode := int32(0o644) // Kubernetes' default
			if v.Secret.DefaultMode != nil {
				mode = *v.Secret.DefaultMode
			}
			if mode&0o040 == 0 || mode&0o007 != 0 {
				t.Errorf("%s pods: Secret volume %s has mode %#o: want group-readable, nothing for others", pod.name, v.Name, mode)
			}
		}
	}
}

// secretFile says which key of which Secret the file at path is, in
// container c of spec: path must lie in a mount of a Secret volume.
func secretFile(spec corev1.PodSpec, c corev1.Container, file string) (secret, key string, err error) {
	for _, mount := range c.VolumeMounts {
		rel, ok := strings.CutPrefix(path.Clean(file), path.Clean(mount.MountPath)+"/")
		if !ok {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name != mount.Name {
				continue
			}
			if v.Secret == nil {
				return "", "", fmt.Errorf("mount %s is not a Secret", mount.MountPath)
			}
			if !mount.ReadOnly {
				return "", "", fmt.Errorf("mount %s of Secret %s is writable", mount.MountPath, v.Secret.SecretName)
			}
			return v.Secret.SecretName, rel, nil
		}
		return "", "", fmt.Errorf("mount %s names no volume", mount.MountPath)
	}
	return "", "", fmt.Errorf("not in any volume mount of container %s", c.Name)
}

// certgenRole is deploy/certgen-role.yaml, the rights certgen --kube needs.
func certgenRole(t *testing.T) *rbacv1.Role {
	t.Helper()
	data, err := os.ReadFile("certgen-role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{}
	if err := yaml.UnmarshalStrict(data, role); err != nil {
		t.Fatalf("certgen-role.yaml: %v", err)
	}
	return role
}

// secretAsFiles writes the data of a Secret into a new directory, one file
// per key, as the kubelet mounts it.
func secretAsFiles(t *testing.T, secret *corev1.Secret) string {
	t.Helper()
	dir := t.TempDir()
	for key, value := range secret.Data {
		if err := os.WriteFile(filepath.Join(dir, key), value, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// makeXDSCerts runs `ingress-xds certgen --kube` as a user bound to
// deploy/certgen-role.yaml and nothing else, twice (the second time
// replacing the Secrets, as a rotation does), and checks that it needed
// exactly the rights of that Role, while the control plane's ServiceAccount
// has none of them. It returns the Secrets as the kubelet mounts them.
func makeXDSCerts(t *testing.T, api *auditedAPIServer, ns string) *framework.XDSCerts {
	t.Helper()
	ctx := t.Context()
	role := certgenRole(t)
	if role.Namespace != ns {
		t.Fatalf("certgen-role.yaml is for namespace %q, deploy/ installs into %q", role.Namespace, ns)
	}
	const user = "certgen-user"
	if _, err := api.client.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
	}
	if _, err := api.client.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The authorizer learns of the binding through a watch: wait for it
	// rather than have certgen's first requests refused.
	framework.Eventually(t, waitLong, "the certgen Role is in force", func() error {
		return allowed(ctx, api, user, ns, "create", "")
	})
	// The control plane reads Secrets; it must never be able to write them.
	sa := "system:serviceaccount:" + ns + ":ingress-xds"
	for _, verb := range []string{"create", "update", "patch", "delete"} {
		if err := allowed(ctx, api, sa, ns, verb, certs.DefaultServerSecret); err == nil {
			t.Errorf("the control plane's ServiceAccount may %s Secrets", verb)
		}
	}

	kubeconfig := impersonatingKubeconfig(t, api.config, user)
	certgen := func(extra ...string) (string, error) {
		args := append([]string{"certgen", "--kube", "--kubeconfig", kubeconfig, "--namespace", ns}, extra...)
		out, err := exec.Command(framework.IngressXDS(t), args...).CombinedOutput()
		return string(out), err
	}
	if out, err := certgen(); err != nil {
		t.Fatalf("certgen --kube: %v\n%s", err, out)
	}
	first := getSecret(t, api, ns, certs.DefaultServerSecret)
	if out, err := certgen(); err == nil || !strings.Contains(out, "--overwrite") {
		t.Errorf("certgen --kube replaced existing certificates without --overwrite (%v):\n%s", err, out)
	}
	if out, err := certgen("--overwrite"); err != nil {
		t.Fatalf("certgen --kube --overwrite: %v\n%s", err, out)
	}
	server := getSecret(t, api, ns, certs.DefaultServerSecret)
	client := getSecret(t, api, ns, certs.DefaultClientSecret)
	if string(server.Data[certs.CertFile]) == string(first.Data[certs.CertFile]) {
		t.Error("certgen --overwrite left the server certificate as it was")
	}
	for _, s := range []*corev1.Secret{server, client} {
		if s.Type != corev1.SecretTypeTLS || len(s.Data) != 3 || len(s.Data[certs.CAFile]) == 0 {
			t.Errorf("Secret %s: type %s, keys %d: want kubernetes.io/tls with tls.crt, tls.key and ca.crt", s.Name, s.Type, len(s.Data))
		}
	}

	// Exactly the Role's rights, each one used, none refused.
	used, refused := readAudit(t, api.auditLog, user)
	for _, r := range refused {
		t.Errorf("the API server refused certgen: %s", r)
	}
	want := map[access]bool{}
	for _, r := range role.Rules {
		for _, res := range r.Resources {
			for _, v := range r.Verbs {
				want[access{"", res, v, ""}] = true
			}
		}
	}
	for a := range used {
		if !want[a] {
			t.Errorf("certgen used %s, which certgen-role.yaml does not grant", a)
		}
	}
	for a := range want {
		if !used[a] {
			t.Errorf("certgen-role.yaml grants %s, which certgen never used", a)
		}
	}

	serverDir, clientDir := secretAsFiles(t, server), secretAsFiles(t, client)
	files := func(dir string) framework.TLSFiles {
		return framework.TLSFiles{Cert: filepath.Join(dir, certs.CertFile), Key: filepath.Join(dir, certs.KeyFile), CA: filepath.Join(dir, certs.CAFile)}
	}
	return &framework.XDSCerts{Server: files(serverDir), Client: files(clientDir)}
}

// allowed asks the API server whether user may do verb on Secrets in ns
// (the one called name, when not empty), and returns nil if so.
func allowed(ctx context.Context, api *auditedAPIServer, user, ns, verb, name string) error {
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: ns, Verb: verb, Resource: "secrets", Name: name,
		},
	}}
	got, err := api.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	if !got.Status.Allowed {
		return fmt.Errorf("%s may not %s secrets in %s: %s", user, verb, ns, got.Status.Reason)
	}
	return nil
}

func getSecret(t *testing.T, api *auditedAPIServer, ns, name string) *corev1.Secret {
	t.Helper()
	s, err := api.client.CoreV1().Secrets(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
