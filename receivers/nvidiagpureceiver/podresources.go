package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protowire"
)

// The kubelet pod-resources API (k8s.io/kubelet/pkg/apis/podresources/v1)
// lists, per pod and container, the device IDs the device plugins allocated;
// for the NVIDIA device plugin these are GPU UUIDs (GPU-...) or MIG UUIDs
// (MIG-...). The receiver calls its List method over the kubelet's unix socket
// and decodes the few fields it needs with protowire, which keeps the
// Kubernetes modules out of the build.
const podResourcesListMethod = "/v1.PodResourcesLister/List"

// deviceOwner is the container a device is allocated to.
type deviceOwner struct {
	pod, namespace, container string
}

// podResourcesClient reads device allocations from the kubelet.
type podResourcesClient struct {
	conn    *grpc.ClientConn
	timeout time.Duration
}

func newPodResourcesClient(socket string, timeout time.Duration) (*podResourcesClient, error) {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("kubelet pod-resources socket %s: %w", socket, err)
	}
	return &podResourcesClient{conn: conn, timeout: timeout}, nil
}

func (c *podResourcesClient) close() error { return c.conn.Close() }

// owners returns, per device ID, the containers it is allocated to (more than
// one when the device is shared by time-slicing or MPS replicas).
func (c *podResourcesClient) owners(ctx context.Context) (map[string][]deviceOwner, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var resp rawMessage
	if err := c.conn.Invoke(ctx, podResourcesListMethod, rawMessage{}, &resp, grpc.ForceCodec(rawCodec{})); err != nil {
		return nil, err
	}
	return parseListPodResourcesResponse(resp)
}

// rawMessage is an already-encoded protobuf message.
type rawMessage []byte

// rawCodec passes encoded protobuf messages through gRPC unchanged. Its
// name is "proto" so that the content type is the one the kubelet expects.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case rawMessage:
		return m, nil
	case *rawMessage:
		return *m, nil
	}
	return nil, fmt.Errorf("raw codec: cannot marshal %T", v)
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	m, ok := v.(*rawMessage)
	if !ok {
		return fmt.Errorf("raw codec: cannot unmarshal into %T", v)
	}
	*m = append((*m)[:0], data...)
	return nil
}

// parseListPodResourcesResponse decodes
//
//	ListPodResourcesResponse { repeated PodResources pod_resources = 1; }
//	PodResources { string name = 1; string namespace = 2; repeated ContainerResources containers = 3; }
//	ContainerResources { string name = 1; repeated ContainerDevices devices = 2; }
//	ContainerDevices { string resource_name = 1; repeated string device_ids = 2; }
//
// keeping only devices of nvidia.com/* resources.
func parseListPodResourcesResponse(b []byte) (map[string][]deviceOwner, error) {
	out := map[string][]deviceOwner{}
	err := eachField(b, func(num protowire.Number, v []byte) error {
		if num != 1 {
			return nil
		}
		return parsePodResources(v, out)
	})
	return out, err
}

// parsePodResources decodes one PodResources into out.
func parsePodResources(b []byte, out map[string][]deviceOwner) error {
	var pod, ns string
	var containers [][]byte
	if err := eachField(b, func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			pod = string(v)
		case 2:
			ns = string(v)
		case 3:
			containers = append(containers, v)
		}
		return nil
	}); err != nil {
		return err
	}
	for _, c := range containers {
		if err := parseContainerResources(c, pod, ns, out); err != nil {
			return err
		}
	}
	return nil
}

// parseContainerResources decodes one ContainerResources of pod in
// namespace ns into out.
func parseContainerResources(b []byte, pod, ns string, out map[string][]deviceOwner) error {
	var name string
	var devices [][]byte
	if err := eachField(b, func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			name = string(v)
		case 2:
			devices = append(devices, v)
		}
		return nil
	}); err != nil {
		return err
	}
	owner := deviceOwner{pod: pod, namespace: ns, container: name}
	for _, d := range devices {
		resource, ids, err := parseContainerDevices(d)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(resource, "nvidia.com/") {
			continue
		}
		for _, id := range ids {
			// Time-slicing and MPS replicas are named <uuid>::<n>.
			id, _, _ = strings.Cut(id, "::")
			out[id] = append(out[id], owner)
		}
	}
	return nil
}

// parseContainerDevices decodes one ContainerDevices.
func parseContainerDevices(b []byte) (resource string, ids []string, err error) {
	err = eachField(b, func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			resource = string(v)
		case 2:
			ids = append(ids, string(v))
		}
		return nil
	})
	return resource, ids, err
}

// eachField calls fn for every length-delimited field of a message and skips
// the others.
func eachField(b []byte, fn func(protowire.Number, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errors.New("pod-resources response: bad tag")
		}
		b = b[n:]
		if typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return errors.New("pod-resources response: bad field")
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return errors.New("pod-resources response: bad length")
		}
		if err := fn(num, v); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
