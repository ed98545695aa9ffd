package nvidiagpureceiver

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseCgroup(t *testing.T) {
	const cid = "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa99887766554433221100"
	tests := []struct {
		name, content, container, pod string
	}{
		{"cgroup v2 systemd containerd", "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7d5b4c3a_1f2e_4d6c_9b8a_0123456789ab.slice/cri-containerd-" + cid + ".scope\n",
			cid, "7d5b4c3a-1f2e-4d6c-9b8a-0123456789ab"},
		{"cgroup v1 cgroupfs", "12:pids:/kubepods/besteffort/pod7d5b4c3a-1f2e-4d6c-9b8a-0123456789ab/" + cid + "\n11:memory:/kubepods/besteffort/pod7d5b4c3a-1f2e-4d6c-9b8a-0123456789ab/" + cid + "\n",
			cid, "7d5b4c3a-1f2e-4d6c-9b8a-0123456789ab"},
		{"cri-o", "0::/kubepods.slice/kubepods-pod7d5b4c3a_1f2e_4d6c_9b8a_0123456789ab.slice/crio-" + cid + ".scope\n",
			cid, "7d5b4c3a-1f2e-4d6c-9b8a-0123456789ab"},
		{"docker cgroupfs", "0::/docker/" + cid + "\n", cid, ""},
		{"docker systemd", "0::/system.slice/docker-" + cid + ".scope\n", cid, ""},
		{"host process", "0::/user.slice/user-1000.slice/session-3.scope\n", "", ""},
		{"empty", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, p := parseCgroup(tt.content)
			assert.Equal(t, tt.container, c)
			assert.Equal(t, tt.pod, p)
		})
	}
}

func TestProcResolverCachesAndSweeps(t *testing.T) {
	r := newProcResolver(filepath.Join("testdata", "proc"))
	info := r.lookup(4242)
	assert.Equal(t, "python3", info.name)
	assert.Equal(t, "7d5b4c3a-1f2e-4d6c-9b8a-0123456789ab", info.podUID)
	assert.Len(t, info.containerID, 64)
	assert.Equal(t, processInfo{}, r.lookup(99999), "a vanished PID yields no attribution")
	r.sweep()
	assert.Len(t, r.cache, 2)
	r.lookup(4242)
	r.sweep()
	assert.Len(t, r.cache, 1, "PIDs not seen since the previous sweep are forgotten")
}
