// Package test renders the otelcol-llm Helm chart for every ci/*-values.yaml
// scenario and checks the output without a cluster: helm lint, strict decoding
// of every manifest against the Kubernetes API types, and `otelcol-llm
// validate` on the collector configuration taken from the rendered ConfigMap,
// with the environment the rendered container would have.
//
// It is its own module so that the Kubernetes client libraries do not enter
// the collector's dependency graph. `make chart-test` runs it with HELM and
// OTELCOL_LLM_BINARY set.
package test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

const chartDir = "../otelcol-llm"

// kubeVersion is the Kubernetes version the chart is rendered for; a helm
// built with go install reports v1.20 otherwise.
const kubeVersion = "1.31.0"

func tool(t *testing.T, env string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		t.Fatalf("%s is not set: run these tests with `make chart-test`", env)
	}
	return p
}

func run(t *testing.T, env []string, name string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "%s %v timed out", name, args)
	return stdout.String(), stderr.String(), err
}

// render runs helm template with the given values files and --set flags.
func render(t *testing.T, valuesFiles []string, sets ...string) (string, string, error) {
	args := []string{"template", "llm", chartDir, "--namespace", "observability", "--kube-version", kubeVersion}
	for _, f := range valuesFiles {
		args = append(args, "--values", f)
	}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	return run(t, nil, tool(t, "HELM"), args...)
}

var docSplit = regexp.MustCompile(`(?m)^---\s*$`)

// decodeStrict decodes every document of a rendered chart with the client-go
// scheme in strict mode: unknown or duplicated fields are errors.
func decodeStrict(t *testing.T, manifest string) []runtime.Object {
	t.Helper()
	decoder := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	var objs []runtime.Object
	for _, doc := range docSplit.Split(manifest, -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		obj, gvk, err := decoder.Decode([]byte(doc), nil, nil)
		require.NoError(t, err, "strict decoding of:\n%s", doc)
		require.NotNil(t, gvk)
		objs = append(objs, obj)
	}
	return objs
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func podSpec(t *testing.T, objs []runtime.Object) *corev1.PodSpec {
	t.Helper()
	for _, o := range objs {
		switch w := o.(type) {
		case *appsv1.DaemonSet:
			return &w.Spec.Template.Spec
		case *appsv1.Deployment:
			return &w.Spec.Template.Spec
		case *batchv1.Job:
			return &w.Spec.Template.Spec
		}
	}
	t.Fatal("no DaemonSet, Deployment or Job rendered")
	return nil
}

func configOf(t *testing.T, objs []runtime.Object) string {
	t.Helper()
	for _, o := range objs {
		if cm, ok := o.(*corev1.ConfigMap); ok {
			cfg, ok := cm.Data["config.yaml"]
			require.True(t, ok, "ConfigMap %s has no config.yaml", cm.Name)
			return cfg
		}
	}
	t.Fatal("no ConfigMap rendered")
	return ""
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// containerEnv is the environment the collector container would get: plain
// values, $(VAR) references expanded as the kubelet does, the downward-API
// fields given loopback stand-ins and Secret keys a placeholder.
func containerEnv(t *testing.T, c corev1.Container) []string {
	t.Helper()
	values := map[string]string{}
	var env []string
	for _, e := range c.Env {
		v := e.Value
		switch {
		case e.ValueFrom == nil:
		case e.ValueFrom.SecretKeyRef != nil:
			v = "secret-" + e.ValueFrom.SecretKeyRef.Name + "-" + e.ValueFrom.SecretKeyRef.Key
		default:
			require.NotNil(t, e.ValueFrom.FieldRef, "env %s: only fieldRef and secretKeyRef are expected", e.Name)
			v = map[string]string{
				"status.podIP":       "127.0.0.1",
				"spec.nodeName":      "gpu-node-1",
				"metadata.name":      "otelcol-llm-0",
				"metadata.namespace": "observability",
			}[e.ValueFrom.FieldRef.FieldPath]
			require.NotEmpty(t, v, "env %s: unexpected fieldRef %s", e.Name, e.ValueFrom.FieldRef.FieldPath)
		}
		v = varRef.ReplaceAllStringFunc(v, func(ref string) string {
			if x, ok := values[ref[2:len(ref)-1]]; ok {
				return x
			}
			return ref
		})
		values[e.Name] = v
		env = append(env, e.Name+"="+v)
	}
	return env
}

func TestScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			stdout, stderr, err := run(t, nil, tool(t, "HELM"), "lint", "--strict", "--kube-version", kubeVersion, chartDir, "--values", f)
			require.NoError(t, err, "helm lint:\n%s\n%s", stdout, stderr)

			manifest, stderr, err := render(t, []string{f})
			require.NoError(t, err, "helm template: %s", stderr)
			objs := decodeStrict(t, manifest)

			spec := podSpec(t, objs)
			require.Len(t, spec.Containers, 1)
			cfg := filepath.Join(t.TempDir(), "config.yaml")
			require.NoError(t, os.WriteFile(cfg, []byte(configOf(t, objs)), 0o600))
			// Every pod's environment: an Indexed Job's pods differ by JOB_COMPLETION_INDEX.
			for _, env := range podEnvs(t, objs, containerEnv(t, spec.Containers[0])) {
				out, errOut, err := run(t, env, tool(t, "OTELCOL_LLM_BINARY"), "validate", "--config", "file:"+cfg)
				require.NoError(t, err, "otelcol-llm validate on the rendered config with %v:\n%s%s", env, out, errOut)
			}
		})
	}
}

func renderObjects(t *testing.T, values string, sets ...string) []runtime.Object {
	t.Helper()
	manifest, stderr, err := render(t, []string{filepath.Join(chartDir, "ci", values)}, sets...)
	require.NoError(t, err, stderr)
	return decodeStrict(t, manifest)
}

func TestAgentWorkload(t *testing.T) {
	objs := renderObjects(t, "agent-values.yaml")
	var ds *appsv1.DaemonSet
	for _, o := range objs {
		if d, ok := o.(*appsv1.DaemonSet); ok {
			ds = d
		}
		_, isDeployment := o.(*appsv1.Deployment)
		assert.False(t, isDeployment, "agent mode renders no Deployment")
	}
	require.NotNil(t, ds, "agent mode renders a DaemonSet")
	spec := ds.Spec.Template.Spec
	require.NotNil(t, spec.RuntimeClassName)
	assert.Equal(t, "nvidia", *spec.RuntimeClassName)
	assert.Contains(t, spec.Tolerations, corev1.Toleration{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	assert.Equal(t, "true", spec.NodeSelector["nvidia.com/gpu.present"])

	c := spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	assert.Equal(t, "all", env["NVIDIA_VISIBLE_DEVICES"])
	assert.Equal(t, "utility", env["NVIDIA_DRIVER_CAPABILITIES"])
	assert.Equal(t, "819MiB", env["GOMEMLIMIT"], "80% of the 1Gi limit")
	require.NotNil(t, c.SecurityContext)
	assert.False(t, *c.SecurityContext.AllowPrivilegeEscalation)
	assert.True(t, *c.SecurityContext.ReadOnlyRootFilesystem)
	assert.Equal(t, []corev1.Capability{"ALL"}, c.SecurityContext.Capabilities.Drop)

	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m
	}
	for _, p := range []string{"/var/log/vllm", "/var/lib/kubelet/pod-resources"} {
		require.Contains(t, mounts, p)
		assert.True(t, mounts[p].ReadOnly, "%s is mounted read-only", p)
	}
	require.NotNil(t, c.LivenessProbe)
	assert.Equal(t, "health", c.LivenessProbe.HTTPGet.Port.StrVal)
}

func TestGatewayWorkload(t *testing.T) {
	objs := renderObjects(t, "gateway-values.yaml",
		"gateway.autoscaling.enabled=true", "gateway.podDisruptionBudget.enabled=true", "resources.limits.memory=2G")
	var (
		dep *appsv1.Deployment
		svc *corev1.Service
		hpa *autoscalingv2.HorizontalPodAutoscaler
		pdb *policyv1.PodDisruptionBudget
	)
	for _, o := range objs {
		switch w := o.(type) {
		case *appsv1.Deployment:
			dep = w
		case *corev1.Service:
			svc = w
		case *autoscalingv2.HorizontalPodAutoscaler:
			hpa = w
		case *policyv1.PodDisruptionBudget:
			pdb = w
		}
	}
	require.NotNil(t, dep)
	require.NotNil(t, svc)
	require.NotNil(t, hpa)
	require.NotNil(t, pdb)
	assert.Nil(t, dep.Spec.Replicas, "with autoscaling the HPA owns the replica count")
	assert.Equal(t, dep.Name, hpa.Spec.ScaleTargetRef.Name)
	assert.Equal(t, dep.Spec.Selector.MatchLabels, pdb.Spec.Selector.MatchLabels)
	assert.Equal(t, dep.Spec.Template.Labels["app.kubernetes.io/component"], svc.Spec.Selector["app.kubernetes.io/component"])

	ports := map[string]int32{}
	for _, p := range svc.Spec.Ports {
		ports[p.Name] = p.Port
	}
	assert.Equal(t, map[string]int32{"otlp-grpc": 4317, "otlp-http": 4318, "metrics": 8888, "genai-metrics": 9464}, ports)

	env := map[string]string{}
	for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	assert.Equal(t, "1525MiB", env["GOMEMLIMIT"], "80% of 2G (decimal) in MiB")
	assert.Equal(t, "tempo.observability.svc:4317", env["OTELCOL_LLM_UPSTREAM_ENDPOINT"])
	assert.True(t, *dep.Spec.Template.Spec.SecurityContext.RunAsNonRoot)
}

// TestGatewayUpstreamExamples checks the two upstream examples: Jaeger gets
// the traces only (metrics stay on Prometheus, logs are counted by debug),
// and the vendor gets every signal over TLS with its key from a Secret.
func TestGatewayUpstreamExamples(t *testing.T) {
	type exporter struct {
		TLS     struct{ Insecure bool } `json:"tls"`
		Headers map[string]string       `json:"headers"`
	}
	type pipeline struct {
		Exporters []string `json:"exporters"`
	}
	var cfg struct {
		Exporters map[string]exporter `json:"exporters"`
		Service   struct {
			Pipelines map[string]pipeline `json:"pipelines"`
		} `json:"service"`
	}
	envOf := func(objs []runtime.Object) map[string]corev1.EnvVar {
		out := map[string]corev1.EnvVar{}
		for _, e := range podSpec(t, objs).Containers[0].Env {
			out[e.Name] = e
		}
		return out
	}

	objs := renderObjects(t, "gateway-jaeger-values.yaml")
	require.NoError(t, yaml.Unmarshal([]byte(configOf(t, objs)), &cfg))
	assert.Equal(t, "jaeger-collector.observability.svc:4317", envOf(objs)["OTELCOL_LLM_UPSTREAM_ENDPOINT"].Value)
	assert.Equal(t, []string{"otlp_grpc/direct"}, cfg.Service.Pipelines["traces/upstream"].Exporters)
	assert.Equal(t, []string{"prometheus"}, cfg.Service.Pipelines["metrics"].Exporters)
	assert.Equal(t, []string{"debug"}, cfg.Service.Pipelines["logs"].Exporters)

	objs = renderObjects(t, "gateway-vendor-values.yaml")
	cfg.Exporters = nil
	require.NoError(t, yaml.Unmarshal([]byte(configOf(t, objs)), &cfg))
	env := envOf(objs)
	assert.Equal(t, "otlp.vendor.example:443", env["OTELCOL_LLM_UPSTREAM_ENDPOINT"].Value)
	key := env["OTLP_VENDOR_API_KEY"].ValueFrom
	require.NotNil(t, key)
	require.NotNil(t, key.SecretKeyRef)
	assert.Equal(t, "otlp-vendor", key.SecretKeyRef.Name)
	assert.Equal(t, "api-key", key.SecretKeyRef.Key)
	for _, name := range []string{"otlp_grpc/direct", "otlp_grpc/upstream"} {
		e := cfg.Exporters[name]
		assert.False(t, e.TLS.Insecure, name)
		assert.Equal(t, map[string]string{"api-key": "${env:OTLP_VENDOR_API_KEY}"}, e.Headers, name)
	}
}

func TestValuesOverrideConfig(t *testing.T) {
	objs := renderObjects(t, "gateway-values.yaml", "config.processors.memory_limiter.limit_percentage=70")
	assert.Contains(t, configOf(t, objs), "limit_percentage: 70")
}

func TestConfigChangeRollsPods(t *testing.T) {
	a := renderObjects(t, "gateway-values.yaml")
	b := renderObjects(t, "gateway-values.yaml", "config.processors.memory_limiter.limit_percentage=70")
	checksum := func(objs []runtime.Object) string {
		for _, o := range objs {
			if d, ok := o.(*appsv1.Deployment); ok {
				return d.Spec.Template.Annotations["checksum/config"]
			}
		}
		return ""
	}
	require.NotEmpty(t, checksum(a))
	assert.NotEqual(t, checksum(a), checksum(b))
}

func TestRenderErrorsNameTheValue(t *testing.T) {
	tests := []struct {
		values string
		sets   []string
		want   string
	}{
		{"gateway-values.yaml", []string{"mode=sidecar"}, `mode: "sidecar" is not supported; allowed values: agent, gateway`},
		{"gateway-values.yaml", []string{"gateway.upstreamEndpoint="}, "gateway.upstreamEndpoint must be set"},
		{"agent-values.yaml", []string{"agent.gatewayEndpoint="}, "agent.gatewayEndpoint must be set"},
		{"gateway-values.yaml", []string{"image.repository="}, "image.repository must be set"},
		{"gateway-values.yaml", []string{"resources.limits.memory=1Qi"}, `resources.limits.memory: unit "Qi" of "1Qi" is not supported`},
		{"gateway-values.yaml", []string{"gomemlimitRatio=1.5"}, "gomemlimitRatio: 1.5 must be in (0, 1]"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			_, stderr, err := render(t, []string{filepath.Join(chartDir, "ci", tt.values)}, tt.sets...)
			require.Error(t, err)
			assert.Contains(t, stderr, tt.want)
		})
	}
}

// TestUpstreamChartExample validates the collector configuration of the
// example values for the upstream opentelemetry-collector chart with the
// built binary, as that chart would run it.
func TestUpstreamChartExample(t *testing.T) {
	raw, err := os.ReadFile("../examples/upstream-chart-values.yaml")
	require.NoError(t, err)
	var values struct {
		Command struct {
			Name string `json:"name"`
		} `json:"command"`
		AlternateConfig map[string]any `json:"alternateConfig"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &values))
	assert.Equal(t, "otelcol-llm", values.Command.Name, "the image keeps the binary at /otelcol-llm")
	require.NotEmpty(t, values.AlternateConfig)
	cfg, err := yaml.Marshal(values.AlternateConfig)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "relay.yaml")
	require.NoError(t, os.WriteFile(path, cfg, 0o600))
	out, errOut, err := run(t, []string{"MY_POD_IP=127.0.0.1"}, tool(t, "OTELCOL_LLM_BINARY"), "validate", "--config", "file:"+path)
	require.NoError(t, err, "otelcol-llm validate:\n%s%s", out, errOut)
}
