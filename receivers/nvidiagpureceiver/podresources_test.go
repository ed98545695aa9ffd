package nvidiagpureceiver

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
)

type fakeContainer struct {
	name    string
	devices map[string][]string // resource name -> device IDs
}

type fakePod struct {
	name, namespace string
	containers      []fakeContainer
}

func bytesField(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// encodeList builds a ListPodResourcesResponse as the kubelet sends it,
// with a varint field the decoder must skip.
func encodeList(pods []fakePod) []byte {
	var out []byte
	for _, p := range pods {
		var pb []byte
		pb = bytesField(pb, 1, []byte(p.name))
		pb = bytesField(pb, 2, []byte(p.namespace))
		for _, c := range p.containers {
			var cb []byte
			cb = bytesField(cb, 1, []byte(c.name))
			for res, ids := range c.devices {
				var db []byte
				db = bytesField(db, 1, []byte(res))
				for _, id := range ids {
					db = bytesField(db, 2, []byte(id))
				}
				db = protowire.AppendTag(db, 4, protowire.VarintType) // unknown field
				db = protowire.AppendVarint(db, 7)
				cb = bytesField(cb, 2, db)
			}
			pb = bytesField(pb, 3, cb)
		}
		out = bytesField(out, 1, pb)
	}
	return out
}

// startKubelet serves the pod-resources List method on a unix socket.
func startKubelet(t *testing.T, pods []fakePod) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "kubelet.sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	resp := rawMessage(encodeList(pods))
	srv := grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
		method, _ := grpc.MethodFromServerStream(stream)
		if method != podResourcesListMethod {
			return grpc.ErrServerStopped
		}
		var req rawMessage
		if err := stream.RecvMsg(&req); err != nil {
			return err
		}
		return stream.SendMsg(resp)
	}))
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Stop(); <-done })
	return sock
}

func TestParseListPodResourcesResponse(t *testing.T) {
	owners, err := parseListPodResourcesResponse(encodeList([]fakePod{
		{"vllm-0", "llm", []fakeContainer{{"server", map[string][]string{"nvidia.com/gpu": {"GPU-a", "GPU-b"}}}}},
		{"shared-1", "dev", []fakeContainer{{"nb", map[string][]string{"nvidia.com/gpu": {"GPU-c::1"}}}}},
		{"shared-2", "dev", []fakeContainer{{"nb", map[string][]string{"nvidia.com/gpu": {"GPU-c::2"}}}}},
		{"nic", "net", []fakeContainer{{"app", map[string][]string{"example.com/nic": {"eth1"}}}}},
	}))
	require.NoError(t, err)
	assert.Equal(t, []deviceOwner{{"vllm-0", "llm", "server"}}, owners["GPU-a"])
	assert.Equal(t, []deviceOwner{{"vllm-0", "llm", "server"}}, owners["GPU-b"])
	assert.Len(t, owners["GPU-c"], 2, "time-slicing replicas map to one GPU")
	assert.NotContains(t, owners, "eth1", "non-NVIDIA devices ignored")

	_, err = parseListPodResourcesResponse([]byte{0x0a, 0x05, 0x01})
	assert.Error(t, err, "truncated message")
}

func TestPodAttributionFromKubelet(t *testing.T) {
	whole, mig := h100(0), migH100(1)
	sock := startKubelet(t, []fakePod{
		{"vllm-0", "llm", []fakeContainer{{"server", map[string][]string{"nvidia.com/gpu": {whole.uuid}}}}},
		{"triton-0", "llm", []fakeContainer{{"triton", map[string][]string{"nvidia.com/mig-3g.40gb": {mig.mig[0].uuid}}}}},
	})
	sc, _ := testSession(t, newFakeNVML(whole, mig), componenttest.NewNopTelemetrySettings(), func(c *Config) {
		c.Kubernetes.PodResourcesSocket = sock
	})
	md, err := sc.scrape(context.Background())
	require.NoError(t, err)

	res := func(hwID string) map[string]any {
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			a := md.ResourceMetrics().At(i).Resource().Attributes()
			if v, ok := a.Get("hw.id"); ok && v.Str() == hwID {
				return a.AsRaw()
			}
		}
		return nil
	}
	assert.Equal(t, "vllm-0", res(whole.uuid)["k8s.pod.name"])
	assert.Equal(t, "llm", res(whole.uuid)["k8s.namespace.name"])
	assert.Equal(t, "server", res(whole.uuid)["k8s.container.name"])
	assert.Equal(t, "triton-0", res(mig.mig[0].uuid)["k8s.pod.name"])
	assert.NotContains(t, res(mig.mig[1].uuid), "k8s.pod.name", "unallocated MIG device")
	assert.NotContains(t, res(mig.uuid), "k8s.pod.name", "the MIG parent is not allocated as a whole")

	// Processes inherit the pod of their GPU or MIG instance.
	p := findPoints(md, whole.uuid, mProcessMemoryUsage)
	require.Len(t, p, 1)
	v, _ := p[0].Attributes().Get("k8s.pod.name")
	assert.Equal(t, "vllm-0", v.Str())
	p = findPoints(md, mig.uuid, mProcessMemoryUsage)
	require.Len(t, p, 1)
	v, _ = p[0].Attributes().Get("k8s.pod.name")
	assert.Equal(t, "triton-0", v.Str(), "process in GPU instance 1 belongs to the pod holding that MIG device")
}

func TestPodResourcesUnavailableIsCountedNotFatal(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	g := h100(0)
	sc, _ := testSession(t, newFakeNVML(g), tel.NewTelemetrySettings(), func(c *Config) {
		c.Kubernetes.PodResourcesSocket = filepath.Join(t.TempDir(), "missing.sock")
		c.Kubernetes.Timeout = 200 * time.Millisecond
	})
	md, err := sc.scrape(context.Background())
	require.NoError(t, err, "attribution is best effort")
	assert.True(t, hasMetric(md, g.uuid, mPower))
	m, err := tel.GetMetric("otelcol_nvidia_gpu_pod_resources_errors")
	require.NoError(t, err)
	assert.Equal(t, int64(1), sumInt(m))
}
