package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
)

// podEnvs returns the environment of each pod the objects would run: one
// for a Deployment or DaemonSet (all pods alike), one per index for an
// Indexed Job, whose pods Kubernetes gives JOB_COMPLETION_INDEX = 0..N-1.
func podEnvs(t *testing.T, objs []runtime.Object, env []string) [][]string {
	t.Helper()
	for _, o := range objs {
		job, ok := o.(*batchv1.Job)
		if !ok {
			continue
		}
		require.NotNil(t, job.Spec.CompletionMode)
		require.Equal(t, batchv1.IndexedCompletion, *job.Spec.CompletionMode)
		require.NotNil(t, job.Spec.Completions)
		var out [][]string
		for i := 0; i < int(*job.Spec.Completions); i++ {
			out = append(out, append(append([]string(nil), env...), "JOB_COMPLETION_INDEX="+strconv.Itoa(i)))
		}
		return out
	}
	return [][]string{env}
}

func jobOf(t *testing.T, objs []runtime.Object) *batchv1.Job {
	t.Helper()
	var job *batchv1.Job
	for _, o := range objs {
		if j, ok := o.(*batchv1.Job); ok {
			require.Nil(t, job, "one Job per run")
			job = j
		}
		switch o.(type) {
		case *corev1.Service:
			t.Errorf("loadtest mode renders no Service")
		}
	}
	require.NotNil(t, job, "loadtest mode renders a Job")
	return job
}

// TestLoadtestJob: the loadtest mode renders an Indexed Job with completions =
// parallelism = shards, the run id, start time, shard count and gateway set
// once for every pod, the resources per pod, and a collector configuration
// that `otelcol-llm validate` accepts in each pod's environment (index 0..N-1)
// and rejects for an index outside the Job.
func TestLoadtestJob(t *testing.T) {
	objs := renderObjects(t, "loadtest-values.yaml", "loadtest.shards=3", "loadtest.loadgen.arrival.rate=90")
	job := jobOf(t, objs)
	spec := job.Spec
	require.NotNil(t, spec.Completions)
	require.NotNil(t, spec.Parallelism)
	assert.Equal(t, int32(3), *spec.Completions)
	assert.Equal(t, int32(3), *spec.Parallelism)
	assert.Equal(t, batchv1.IndexedCompletion, *spec.CompletionMode)
	assert.Equal(t, int32(0), *spec.BackoffLimit)
	assert.Equal(t, corev1.RestartPolicyNever, spec.Template.Spec.RestartPolicy)
	assert.Contains(t, job.Name, "vllm-8b-20261129-a", "one Job per run")

	c := spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	assert.Equal(t, "vllm-8b-20261129-a", env["OTELCOL_LLM_RUN_ID"])
	assert.Equal(t, "2026-11-29T21:00:00Z", env["OTELCOL_LLM_START_AT"])
	assert.Equal(t, "3", env["OTELCOL_LLM_SHARD_COUNT"])
	assert.Equal(t, "llm-otelcol-llm-gateway.observability.svc:4317", env["OTELCOL_LLM_GATEWAY_ENDPOINT"])
	assert.NotContains(t, env, "JOB_COMPLETION_INDEX", "Kubernetes sets the index in each pod")
	assert.Equal(t, resource.MustParse("1"), c.Resources.Requests[corev1.ResourceCPU])
	assert.Equal(t, resource.MustParse("1Gi"), c.Resources.Limits[corev1.ResourceMemory])

	raw := configOf(t, objs)
	assert.Contains(t, raw, "rate: 90", "the loadgen values are merged into the config")
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(raw), 0o600))
	base := containerEnv(t, c)
	envs := podEnvs(t, objs, base)
	require.Len(t, envs, 3)
	for i, e := range envs {
		out, errOut, err := run(t, e, tool(t, "OTELCOL_LLM_BINARY"), "validate", "--config", "file:"+cfg)
		require.NoError(t, err, "pod %d: otelcol-llm validate:\n%s%s", i, out, errOut)
	}
	// A pod outside the Job's indexes is refused, naming the field.
	out, errOut, err := run(t, append(base, "JOB_COMPLETION_INDEX=3"), tool(t, "OTELCOL_LLM_BINARY"), "validate", "--config", "file:"+cfg)
	require.Error(t, err, "index 3 of 3 must not validate:\n%s", out)
	assert.Contains(t, out+errOut, "shard.index: 3 (from JOB_COMPLETION_INDEX) is out of range")
}

func TestLoadtestRenderErrorsNameTheValue(t *testing.T) {
	for _, tt := range []struct{ set, want string }{
		{"loadtest.runId=", "loadtest.runId must be set"},
		{"loadtest.runId=a/b", `loadtest.runId: "a/b" may only hold`},
		{"loadtest.startAt=", "loadtest.startAt must be set"},
		{"loadtest.startAt=tomorrow", `loadtest.startAt: "tomorrow" is not an RFC 3339 time`},
		{"loadtest.shards=0", "loadtest.shards: 0 must be at least 1"},
		{"loadtest.gatewayEndpoint=", "loadtest.gatewayEndpoint must be set"},
	} {
		t.Run(tt.set, func(t *testing.T) {
			_, stderr, err := render(t, []string{filepath.Join(chartDir, "ci", "loadtest-values.yaml")}, tt.set)
			require.Error(t, err, fmt.Sprintf("render with %s must fail", tt.set))
			assert.Contains(t, stderr, tt.want)
		})
	}
}
