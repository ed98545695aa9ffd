package servermetrics

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadVLLMV1Page(t *testing.T) {
	page := `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 7
vllm:num_requests_running{engine="1",model_name="m"} 5
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m"} 3
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.5
vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.97
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{engine="0",model_name="m"} 0.1
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{engine="0",model_name="m"} 4
vllm:num_preemptions_total{engine="1",model_name="m"} 6
# TYPE vllm:num_preemptions_created gauge
vllm:num_preemptions_created{engine="0",model_name="m"} 1.7e9
`
	s, err := Read(strings.NewReader(page))
	require.NoError(t, err)
	assert.Equal(t, "vllm", s.Server)
	assert.Equal(t, 12.0, s.Gauges[Running], "running is summed over engines")
	assert.Equal(t, 0.97, s.Gauges[KVCache], "a fraction is the fullest engine's")
	assert.Equal(t, "vllm:kv_cache_usage_perc", s.Names[KVCache], "the V1 name wins over the deprecated one")
	assert.Equal(t, 10.0, s.Counters[Preemptions])
}

func TestReadNamesWhatIsWrong(t *testing.T) {
	_, err := Read(strings.NewReader("vllm:num_requests_running{engine=\"0\" 7\n"))
	assert.ErrorContains(t, err, "metrics page")
	s, err := Read(strings.NewReader("# TYPE up gauge\nup 1\n"))
	require.NoError(t, err)
	assert.Empty(t, s.Server)
}

// TestReadRealPages reads load_report's real /metrics pages (their sources
// are in that folder's SOURCES.md): each is read as its server.
func TestReadRealPages(t *testing.T) {
	dir := filepath.Join("..", "..", "exporters", "loadreportexporter", "testdata", "servermetrics", "real")
	want := map[string]string{"vllm": "vllm", "sglang": "sglang", "tgis": "tgi", "llamacpp": "llamacpp"}
	files, err := filepath.Glob(filepath.Join(dir, "*.prom"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	read := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		s, err := Read(strings.NewReader(string(data)))
		require.NoError(t, err, f)
		prefix := strings.SplitN(filepath.Base(f), "-", 2)[0]
		if s.Server == "" {
			continue // pages without samples of the table (HELP/TYPE only, Dynamo's model gauges)
		}
		read++
		assert.Equal(t, want[prefix], s.Server, f)
		assert.NotEmpty(t, s.Names, f)
	}
	assert.GreaterOrEqual(t, read, 7)
}
