package nvidiagpureceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/nvidiagpureceiver"

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// processInfo is what the receiver attaches to a GPU process.
type processInfo struct {
	name        string // /proc/<pid>/comm
	containerID string // from /proc/<pid>/cgroup
	podUID      string // from /proc/<pid>/cgroup (kubelet cgroup layout)
}

// procResolver attributes PIDs to containers and Kubernetes pods from
// /proc/<pid>/cgroup. Results are cached per PID for as long as the PID keeps
// showing up on a GPU.
type procResolver struct {
	root  string
	cache map[uint32]processInfo
	seen  map[uint32]bool
}

func newProcResolver(root string) *procResolver {
	return &procResolver{root: root, cache: map[uint32]processInfo{}, seen: map[uint32]bool{}}
}

// lookup returns the attribution of a PID.
func (r *procResolver) lookup(pid uint32) processInfo {
	r.seen[pid] = true
	if info, ok := r.cache[pid]; ok {
		return info
	}
	dir := filepath.Join(r.root, strconv.FormatUint(uint64(pid), 10))
	var info processInfo
	if b, err := os.ReadFile(filepath.Join(dir, "comm")); err == nil {
		info.name = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "cgroup")); err == nil {
		info.containerID, info.podUID = parseCgroup(string(b))
	}
	r.cache[pid] = info
	return info
}

// sweep forgets PIDs not looked up since the previous sweep.
func (r *procResolver) sweep() {
	for pid := range r.cache {
		if !r.seen[pid] {
			delete(r.cache, pid)
		}
	}
	clear(r.seen)
}

var (
	// Pod UIDs appear as pod<uid> in cgroupfs paths and as pod<uid with _>
	// in systemd slice names.
	podUIDPattern = regexp.MustCompile(`pod([0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12})`)
	// Container IDs are 64 hex digits, possibly prefixed by the runtime
	// (docker-, cri-containerd-, crio-) and suffixed by .scope.
	containerIDPattern = regexp.MustCompile(`(?:^|[/:-])([0-9a-f]{64})(?:\.scope)?$`)
)

// parseCgroup extracts the container ID and pod UID from the content of a
// /proc/<pid>/cgroup file (cgroup v1 or v2; cgroupfs or systemd drivers;
// Docker, containerd and CRI-O naming).
func parseCgroup(content string) (containerID, podUID string) {
	for _, line := range strings.Split(content, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		path := parts[2]
		if podUID == "" {
			if m := podUIDPattern.FindStringSubmatch(path); m != nil {
				podUID = strings.ReplaceAll(m[1], "_", "-")
			}
		}
		if containerID == "" {
			if m := containerIDPattern.FindStringSubmatch(path); m != nil {
				containerID = m[1]
			}
		}
		if containerID != "" && podUID != "" {
			break
		}
	}
	return containerID, podUID
}
