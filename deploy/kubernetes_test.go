package deploy_test

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/erpgate/erpgate/platform/infra/config"
)

const manifestDir = "kubernetes"

// kustomization is the part of kustomize's Kustomization that
// deploy/kubernetes uses; decoding into it strictly refuses anything else.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
	Images     []struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		NewTag  string `json:"newTag"`
	} `json:"images"`
}

// serviceMonitor is the part of the Prometheus Operator's ServiceMonitor
// (monitoring.coreos.com/v1) that deploy/kubernetes uses.
type serviceMonitor struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	Spec            struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			ScrapeTimeout string `json:"scrapeTimeout"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// manifests are deploy/kubernetes decoded strictly into the Kubernetes API
// types: an unknown or misspelt field fails the test.
type manifests struct {
	kustomization  kustomization
	serviceAccount corev1.ServiceAccount
	deployment     appsv1.Deployment
	service        corev1.Service
	pdb            policyv1.PodDisruptionBudget
	hpa            autoscalingv2.HorizontalPodAutoscaler
	networkPolicy  networkingv1.NetworkPolicy
	migrateJob     batchv1.Job
	serviceMonitor serviceMonitor
}

// decodeStrict decodes one YAML document into v, refusing unknown and
// duplicate fields, and checks its apiVersion and kind.
func decodeStrict(data []byte, v any, apiVersion, kind string) error {
	if docs := bytes.Split(data, []byte("\n---")); len(docs) != 1 {
		return fmt.Errorf("holds %d documents; keep one object per file", len(docs))
	}
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(data, &tm); err != nil {
		return err
	}
	if tm.APIVersion != apiVersion || tm.Kind != kind {
		return fmt.Errorf("is %s %s, want %s %s", tm.APIVersion, tm.Kind, apiVersion, kind)
	}
	return yaml.UnmarshalStrict(data, v)
}

func loadManifests(t *testing.T) *manifests {
	t.Helper()
	m := &manifests{}
	files := []struct {
		name             string
		apiVersion, kind string
		into             any
	}{
		{"kustomization.yaml", "kustomize.config.k8s.io/v1beta1", "Kustomization", &m.kustomization},
		{"serviceaccount.yaml", "v1", "ServiceAccount", &m.serviceAccount},
		{"deployment.yaml", "apps/v1", "Deployment", &m.deployment},
		{"service.yaml", "v1", "Service", &m.service},
		{"poddisruptionbudget.yaml", "policy/v1", "PodDisruptionBudget", &m.pdb},
		{"horizontalpodautoscaler.yaml", "autoscaling/v2", "HorizontalPodAutoscaler", &m.hpa},
		{"networkpolicy.yaml", "networking.k8s.io/v1", "NetworkPolicy", &m.networkPolicy},
		{"migrate-job.yaml", "batch/v1", "Job", &m.migrateJob},
		{"servicemonitor.yaml", "monitoring.coreos.com/v1", "ServiceMonitor", &m.serviceMonitor},
	}
	known := map[string]bool{}
	for _, f := range files {
		known[f.name] = true
		data, err := os.ReadFile(filepath.Join(manifestDir, f.name))
		if err != nil {
			t.Fatal(err)
		}
		if err := decodeStrict(data, f.into, f.apiVersion, f.kind); err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
	}
	onDisk, err := filepath.Glob(filepath.Join(manifestDir, "*.y*ml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range onDisk {
		if !known[filepath.Base(p)] {
			t.Errorf("%s is not checked by this test; add it to loadManifests", p)
		}
	}
	for name := range known {
		if name != "kustomization.yaml" && !slices.Contains(m.kustomization.Resources, name) {
			t.Errorf("kustomization.yaml does not list %s", name)
		}
	}
	return m
}

func TestKubernetesManifestsDecodeStrictly(t *testing.T) {
	loadManifests(t)

	// The decoder refuses what Kubernetes would silently drop.
	data, err := os.ReadFile(filepath.Join(manifestDir, "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(data, []byte("  replicas: 3\n"), []byte("  replicas: 3\n  replica: 4\n"), 1)
	if bytes.Equal(bad, data) {
		t.Fatal("deployment.yaml has no `  replicas: 3` line to misspell")
	}
	var d appsv1.Deployment
	if err := decodeStrict(bad, &d, "apps/v1", "Deployment"); err == nil || !strings.Contains(err.Error(), "replica") {
		t.Errorf("a misspelt field was accepted: %v", err)
	}
}

// settingsByEnv is erpgate's configuration, by environment variable.
func settingsByEnv() map[string]config.Setting {
	out := map[string]config.Setting{}
	for _, s := range config.Settings() {
		out[s.Env] = s
	}
	return out
}

// runtimeEnv are environment variables erpgate honours that are not its
// own settings: the Go runtime's and the TLS trust store's.
var runtimeEnv = []string{"GOGC", "GOMEMLIMIT", "SSL_CERT_FILE", "SSL_CERT_DIR"}

// checkEnv checks a container's environment against the configuration:
// every name is a setting (or the runtime's), every secret comes from a
// Secret, and nothing that is not a secret is read from one.
func checkEnv(t *testing.T, where string, env []corev1.EnvVar) map[string]string {
	t.Helper()
	byEnv := settingsByEnv()
	values := map[string]string{}
	for _, e := range env {
		s, ok := byEnv[e.Name]
		if !ok && !slices.Contains(runtimeEnv, e.Name) {
			t.Errorf("%s: %s is not an erpgate setting", where, e.Name)
			continue
		}
		if _, dup := values[e.Name]; dup {
			t.Errorf("%s: %s is set twice", where, e.Name)
		}
		values[e.Name] = e.Value
		switch {
		case s.Secret && (e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil):
			t.Errorf("%s: %s is a secret and must come from a secretKeyRef, not a value", where, e.Name)
		case !s.Secret && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			t.Errorf("%s: %s is not a secret; set it as a value", where, e.Name)
		}
	}
	return values
}

// setting is the container's value for an environment variable, else the
// configuration's default.
func setting(values map[string]string, env string) string {
	if v, ok := values[env]; ok {
		return v
	}
	return settingsByEnv()[env].Default
}

func checkSecurity(t *testing.T, where string, pod corev1.PodSpec) {
	t.Helper()
	ps := pod.SecurityContext
	if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.RunAsUser == nil || *ps.RunAsUser != 65532 ||
		ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: the pod must run as non-root user 65532 (the image's) with the RuntimeDefault seccomp profile", where)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("%s: the pod mounts a service account token; erpgate needs none", where)
	}
	for _, c := range pod.Containers {
		cs := c.SecurityContext
		if cs == nil || cs.ReadOnlyRootFilesystem == nil || !*cs.ReadOnlyRootFilesystem ||
			cs.AllowPrivilegeEscalation == nil || *cs.AllowPrivilegeEscalation ||
			cs.Capabilities == nil || !slices.Equal(cs.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(cs.Capabilities.Add) != 0 {
			t.Errorf("%s: container %s needs readOnlyRootFilesystem, no privilege escalation and every capability dropped", where, c.Name)
		}
		if c.Image != "erpgate" {
			t.Errorf("%s: container %s has image %q; use `erpgate`, which kustomization.yaml's images sets", where, c.Name, c.Image)
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if _, ok := c.Resources.Requests[r]; !ok {
				t.Errorf("%s: container %s has no %s request", where, c.Name, r)
			}
		}
		if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
			t.Errorf("%s: container %s has no memory limit", where, c.Name)
		}
	}
}

func TestKubernetesDeployment(t *testing.T) {
	m := loadManifests(t)
	d := m.deployment
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Errorf("replicas %v, want at least 2", d.Spec.Replicas)
	}
	pod := d.Spec.Template.Spec
	checkSecurity(t, "deployment", pod)
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	values := checkEnv(t, "deployment", c.Env)
	for _, s := range config.Settings() {
		if s.Default == "" && (s.Env == "DATABASE_URL" || s.Env == "ERPGATE_PUBLIC_BASE_URL" || s.Env == "ERPGATE_ADMIN_TOKEN" || s.Env == "ERPGATE_ENCRYPTION_KEYS") {
			if _, ok := values[s.Env]; !ok {
				t.Errorf("%s is required and not set", s.Env)
			}
		}
	}
	if !strings.HasPrefix(values["ERPGATE_PUBLIC_BASE_URL"], "https://") {
		t.Errorf("ERPGATE_PUBLIC_BASE_URL %q: a deployment serves https", values["ERPGATE_PUBLIC_BASE_URL"])
	}

	// The listen address's port is the container's http port, on every
	// interface.
	host, port, err := net.SplitHostPort(setting(values, "ERPGATE_LISTEN_ADDR"))
	if err != nil {
		t.Fatalf("ERPGATE_LISTEN_ADDR: %v", err)
	}
	if host != "0.0.0.0" && host != "" && host != "::" {
		t.Errorf("ERPGATE_LISTEN_ADDR listens on %q; a pod must listen on every interface", host)
	}
	var http *corev1.ContainerPort
	for i := range c.Ports {
		if c.Ports[i].Name == "http" {
			http = &c.Ports[i]
		}
	}
	if http == nil || strconv.Itoa(int(http.ContainerPort)) != port {
		t.Fatalf("the container port named http %+v is not the listen port %s", http, port)
	}
	if http.ContainerPort != imagePort {
		t.Errorf("container port %d, the image exposes %d", http.ContainerPort, imagePort)
	}

	// Probes: readiness on /readyz, liveness (and start-up) on /healthz,
	// at the http port. The image test GETs these paths of the real binary.
	probe := func(name string, p *corev1.Probe, path string) {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("%s probe: missing or not an HTTP GET", name)
			return
		}
		if p.HTTPGet.Path != path || p.HTTPGet.Port.String() != "http" {
			t.Errorf("%s probe: GET %s on port %s, want %s on http", name, p.HTTPGet.Path, p.HTTPGet.Port.String(), path)
		}
	}
	probe("readiness", c.ReadinessProbe, "/readyz")
	probe("liveness", c.LivenessProbe, "/healthz")
	probe("startup", c.StartupProbe, "/healthz")

	// Shutdown: the grace period covers the preStop wait, a call's whole
	// budget and the shutdown timeout; the shutdown timeout lets a call
	// that began just before SIGTERM finish.
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil || c.Lifecycle.PreStop.Sleep.Seconds < 5 {
		t.Fatal("preStop must sleep at least 5 s (the image has no shell), so the pod leaves the Service before SIGTERM")
	}
	preStop := time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	budget := duration(t, setting(values, "ERPGATE_UPSTREAM_BUDGET"))
	shutdown := duration(t, setting(values, "ERPGATE_SHUTDOWN_TIMEOUT"))
	if shutdown < budget {
		t.Errorf("ERPGATE_SHUTDOWN_TIMEOUT %s is below the tool budget %s: calls in flight at SIGTERM would be cut", shutdown, budget)
	}
	grace := time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second
	if grace <= preStop+budget+shutdown {
		t.Errorf("terminationGracePeriodSeconds %s is not above preStop %s + budget %s + shutdown %s", grace, preStop, budget, shutdown)
	}

	// Memory: the limit holds docs/deploy.md's rule: six times the answer
	// bytes; per held call 60 KiB and six times the 64 KiB an answer may
	// have before it counts in the answer bytes; 90 MiB of its own.
	calls, err := strconv.ParseInt(values["ERPGATE_LIMIT_REPLICA_CALLS"], 10, 64)
	if err != nil || calls <= 0 {
		t.Fatalf("ERPGATE_LIMIT_REPLICA_CALLS %q: set it, or the bound (and memory) follows the node's CPUs", values["ERPGATE_LIMIT_REPLICA_CALLS"])
	}
	answers, err := strconv.ParseInt(setting(values, "ERPGATE_LIMIT_REPLICA_ANSWER_BYTES"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	need := resource.NewQuantity(6*answers+calls*(60<<10+6*64<<10)+90<<20, resource.BinarySI)
	limit := c.Resources.Limits[corev1.ResourceMemory]
	if limit.Cmp(*need) < 0 {
		t.Errorf("memory limit %s is below the sizing rule's %s", limit.String(), need.String())
	}
	if req := c.Resources.Requests[corev1.ResourceMemory]; req.Cmp(limit) > 0 {
		t.Errorf("memory request %s above the limit %s", req.String(), limit.String())
	}
	if strat := d.Spec.Strategy.RollingUpdate; strat == nil || strat.MaxUnavailable == nil || strat.MaxUnavailable.IntValue() != 0 {
		t.Errorf("a rolling update must keep every replica until its successor is ready (maxUnavailable 0)")
	}
}

func duration(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("duration %q: %v", s, err)
	}
	return d
}

func TestKubernetesSelectorsAndPorts(t *testing.T) {
	m := loadManifests(t)
	podLabels := labels.Set(m.deployment.Spec.Template.Labels)
	selects := func(what string, sel *metav1.LabelSelector) {
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil || s.Empty() || !s.Matches(podLabels) {
			t.Errorf("%s does not select the Deployment's pods (%v)", what, err)
		}
	}
	selects("the Deployment's selector", m.deployment.Spec.Selector)
	selects("the Service", &metav1.LabelSelector{MatchLabels: m.service.Spec.Selector})
	selects("the PodDisruptionBudget", m.pdb.Spec.Selector)
	selects("the NetworkPolicy", &m.networkPolicy.Spec.PodSelector)
	if migrate := labels.Set(m.migrateJob.Spec.Template.Labels); labels.SelectorFromSet(m.service.Spec.Selector).Matches(migrate) {
		t.Error("the Service selects the migration Job's pod")
	}

	servicePorts := map[string]string{}
	for _, p := range m.service.Spec.Ports {
		servicePorts[p.Name] = p.TargetPort.String()
	}
	if len(servicePorts) != 2 || servicePorts["http"] != "http" || servicePorts["metrics"] != "metrics" {
		t.Errorf("the Service must forward its ports http and metrics to the container ports of those names: %+v", m.service.Spec.Ports)
	}
	containerPorts := map[string]int32{}
	for _, p := range m.deployment.Spec.Template.Spec.Containers[0].Ports {
		containerPorts[p.Name] = p.ContainerPort
	}
	metricsAddr := ""
	for _, e := range m.deployment.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "ERPGATE_METRICS_ADDR" {
			metricsAddr = e.Value
		}
	}
	if _, port, err := net.SplitHostPort(metricsAddr); err != nil || port != strconv.Itoa(int(containerPorts["metrics"])) {
		t.Errorf("ERPGATE_METRICS_ADDR %q must listen on the container port metrics (%d)", metricsAddr, containerPorts["metrics"])
	}
	if m.service.Spec.SessionAffinity != "" && m.service.Spec.SessionAffinity != corev1.ServiceAffinityNone {
		t.Error("the Service sets session affinity; MCP is stateless and needs none")
	}

	sm := m.serviceMonitor
	s, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
	if err != nil || s.Empty() || !s.Matches(labels.Set(m.service.Labels)) {
		t.Errorf("the ServiceMonitor does not select the Service (%v)", err)
	}
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "metrics" || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("the ServiceMonitor must scrape /metrics on the Service's port metrics (ERPGATE_METRICS_ADDR, no token): %+v", sm.Spec.Endpoints)
	}

	if m.hpa.Spec.ScaleTargetRef.Kind != "Deployment" || m.hpa.Spec.ScaleTargetRef.Name != m.deployment.Name {
		t.Errorf("the HorizontalPodAutoscaler scales %+v, not the Deployment", m.hpa.Spec.ScaleTargetRef)
	}
	if m.hpa.Spec.MinReplicas == nil || *m.hpa.Spec.MinReplicas < 2 || m.hpa.Spec.MaxReplicas < *m.hpa.Spec.MinReplicas {
		t.Errorf("the HorizontalPodAutoscaler's replicas %v to %d", m.hpa.Spec.MinReplicas, m.hpa.Spec.MaxReplicas)
	}
	if m.pdb.Spec.MaxUnavailable == nil && m.pdb.Spec.MinAvailable == nil {
		t.Error("the PodDisruptionBudget bounds nothing")
	}
	pod := m.deployment.Spec.Template.Spec
	if pod.ServiceAccountName != m.serviceAccount.Name || m.migrateJob.Spec.Template.Spec.ServiceAccountName != m.serviceAccount.Name {
		t.Error("the pods do not use the erpgate ServiceAccount")
	}
	if len(m.kustomization.Images) != 1 || m.kustomization.Images[0].Name != "erpgate" {
		t.Errorf("kustomization.yaml must set the image `erpgate`: %+v", m.kustomization.Images)
	}
}

func TestKubernetesNetworkPolicy(t *testing.T) {
	np := loadManifests(t).networkPolicy
	if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) || !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
		t.Fatalf("policy types %v, want Ingress and Egress", np.Spec.PolicyTypes)
	}
	// Ingress to the http port from anywhere, to the metrics port only
	// from a named namespace (Prometheus's), which the rule must name.
	sawMetrics := false
	for _, in := range np.Spec.Ingress {
		if len(in.Ports) != 1 || in.Ports[0].Port == nil {
			t.Errorf("an ingress rule admits more than one port: %+v", in.Ports)
			continue
		}
		switch in.Ports[0].Port.String() {
		case "http":
		case "metrics":
			sawMetrics = true
			if len(in.From) == 0 {
				t.Error("the metrics port is open to every peer")
			}
			for _, f := range in.From {
				if f.NamespaceSelector == nil || len(f.NamespaceSelector.MatchLabels) == 0 || f.IPBlock != nil {
					t.Errorf("the metrics port admits a peer other than a named namespace: %+v", f)
				}
			}
		default:
			t.Errorf("an ingress rule admits the port %s", in.Ports[0].Port)
		}
	}
	if !sawMetrics {
		t.Error("no ingress rule lets Prometheus reach the metrics port")
	}
	// Egress only to DNS (53), Postgres (5432) and the ERPs (443); every
	// rule names its peers and ports, since an empty list allows all.
	allowed := map[string]bool{"53/UDP": true, "53/TCP": true, "5432/TCP": true, "443/TCP": true}
	seen := map[string]bool{}
	for i, e := range np.Spec.Egress {
		if len(e.To) == 0 || len(e.Ports) == 0 {
			t.Errorf("egress rule %d allows every peer or every port", i)
		}
		for _, p := range e.Ports {
			key := p.Port.String() + "/" + string(*p.Protocol)
			if !allowed[key] {
				t.Errorf("egress rule %d allows %s", i, key)
			}
			seen[key] = true
			if key == "443/TCP" {
				checkPublicOnly(t, e.To)
			}
		}
	}
	for k := range allowed {
		if !seen[k] {
			t.Errorf("no egress rule allows %s", k)
		}
	}
}

// checkPublicOnly fails unless the ERP rule's address blocks leave out the
// cluster's and the cloud's private ranges, the metadata service included.
func checkPublicOnly(t *testing.T, peers []networkingv1.NetworkPolicyPeer) {
	t.Helper()
	for _, addr := range []string{"10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "127.0.0.1"} {
		a := netip.MustParseAddr(addr)
		for _, p := range peers {
			if p.IPBlock == nil {
				t.Errorf("the ERP egress rule has a peer that is not an address block: %+v", p)
				continue
			}
			if contains(t, p.IPBlock.CIDR, a) && !slices.ContainsFunc(p.IPBlock.Except, func(c string) bool { return contains(t, c, a) }) {
				t.Errorf("the ERP egress rule reaches %s", addr)
			}
		}
	}
}

func contains(t *testing.T, cidr string, a netip.Addr) bool {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		t.Fatalf("CIDR %q: %v", cidr, err)
	}
	return p.Contains(a)
}

func TestKubernetesMigrationJob(t *testing.T) {
	m := loadManifests(t)
	job := m.migrateJob
	pod := job.Spec.Template.Spec
	checkSecurity(t, "migration job", pod)
	if pod.RestartPolicy != corev1.RestartPolicyNever && pod.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Errorf("restart policy %q", pod.RestartPolicy)
	}
	if len(pod.Containers) != 1 || strings.Join(pod.Containers[0].Args, " ") != "migrate up" {
		t.Fatalf("the Job must run `erpgate migrate up`: %+v", pod.Containers)
	}
	values := checkEnv(t, "migration job", pod.Containers[0].Env)
	if _, ok := values["DATABASE_URL"]; !ok || len(values) != 1 {
		t.Errorf("the Job needs DATABASE_URL only; it has %v", values)
	}
	dbRef := pod.Containers[0].Env[0].ValueFrom.SecretKeyRef
	for _, e := range m.deployment.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "DATABASE_URL" && (e.ValueFrom.SecretKeyRef.Name != dbRef.Name || e.ValueFrom.SecretKeyRef.Key != dbRef.Key) {
			t.Error("the Job and the Deployment read DATABASE_URL from different Secrets")
		}
	}
	if job.Spec.ActiveDeadlineSeconds == nil || job.Spec.BackoffLimit == nil {
		t.Error("the Job needs a deadline and a backoff limit")
	}
}

func TestKubernetesManifestsHoldNoSecret(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(manifestDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(data, &tm); err != nil {
			t.Fatal(err)
		}
		if tm.Kind == "Secret" {
			t.Errorf("%s is a Secret; the manifests refer to Secrets, never hold them", f)
		}
		for _, bad := range []string{"postgres://", "postgresql://", "password", "BEGIN PRIVATE KEY"} {
			if strings.Contains(strings.ToLower(string(data)), strings.ToLower(bad)) {
				t.Errorf("%s contains %q", f, bad)
			}
		}
	}
}
