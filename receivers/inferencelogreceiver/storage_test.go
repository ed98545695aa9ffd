package inferencelogreceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
)

// memStorage is a storage extension whose data outlives the clients it hands
// out, standing in for file_storage across receiver restarts.
type memStorage struct {
	component.StartFunc
	component.ShutdownFunc
	mu   sync.Mutex
	data map[string][]byte
}

func (s *memStorage) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	return &memClient{s: s}, nil
}

type memClient struct{ s *memStorage }

func (c *memClient) Get(_ context.Context, key string) ([]byte, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.s.data[key], nil
}

func (c *memClient) Set(_ context.Context, key string, value []byte) error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.s.data[key] = append([]byte(nil), value...)
	return nil
}

func (c *memClient) Delete(_ context.Context, key string) error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	delete(c.s.data, key)
	return nil
}

func (c *memClient) Batch(ctx context.Context, ops ...*storage.Operation) error {
	for _, op := range ops {
		var err error
		switch op.Type {
		case storage.Get:
			op.Value, err = c.Get(ctx, op.Key)
		case storage.Set:
			err = c.Set(ctx, op.Key, op.Value)
		case storage.Delete:
			err = c.Delete(ctx, op.Key)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (*memClient) Close(context.Context) error { return nil }

type storageHost struct {
	component.Host
	ext map[component.ID]component.Component
}

func (h storageHost) GetExtensions() map[component.ID]component.Component { return h.ext }

func storageID() component.ID { return component.MustNewID("mem_storage") }

func newStorageHost() storageHost {
	return storageHost{ext: map[component.ID]component.Component{storageID(): &memStorage{data: map[string][]byte{}}}}
}

// vllmRequestLines returns vLLM request lines with ids from..to-1.
func vllmRequestLines(from, to int) string {
	var b []byte
	for i := from; i < to; i++ {
		b = fmt.Appendf(b, "INFO 11-29 17:41:12 [async_llm.py:345] Added request req-%05d.\n", i)
	}
	return string(b)
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString(text)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// requestIDs counts the records per inference.request.id.
func requestIDs(batches []plog.Logs) map[string]int {
	ids := map[string]int{}
	for _, ld := range batches {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			sls := ld.ResourceLogs().At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					if v, ok := lrs.At(k).Attributes().Get("inference.request.id"); ok {
						ids[v.Str()]++
					}
				}
			}
		}
	}
	return ids
}

func assertExactlyOnce(t *testing.T, ids map[string]int, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		id := fmt.Sprintf("req-%05d", i)
		assert.Equal(t, 1, ids[id], "record %s", id)
	}
	assert.Len(t, ids, to-from, "no records other than %d..%d", from, to-1)
}

// TestRestartWithStorage stops the receiver, lets the server write more lines
// while it is down, and starts a new receiver on the same storage: the new
// one reads exactly the lines written since, none twice and none lost.
func TestRestartWithStorage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "vllm.log")
	appendFile(t, path, vllmRequestLines(0, 200))
	host := newStorageHost()
	id := storageID()

	cfg := testConfig("vllm", filepath.Join(dir, "*.log"))
	cfg.StorageID = &id
	first := startReceiver(t, cfg, host)
	first.waitRecords(t, 200)
	first.stop(t)
	assertExactlyOnce(t, requestIDs(first.logs.AllLogs()), 0, 200)

	appendFile(t, path, vllmRequestLines(200, 350))

	cfg2 := testConfig("vllm", filepath.Join(dir, "*.log"))
	cfg2.StorageID = &id
	second := startReceiver(t, cfg2, host)
	second.waitRecords(t, 150)
	appendFile(t, path, vllmRequestLines(350, 400))
	second.waitRecords(t, 200)
	second.stop(t)
	assertExactlyOnce(t, requestIDs(second.logs.AllLogs()), 200, 400)
}

// TestRestartWithoutStorageRereads shows what the storage prevents: with
// start_at beginning and no storage, a restart reads the file again.
func TestRestartWithoutStorageRereads(t *testing.T) {
	dir := t.TempDir()
	appendFile(t, filepath.Join(dir, "vllm.log"), vllmRequestLines(0, 50))
	for range 2 {
		s := startReceiver(t, testConfig("vllm", filepath.Join(dir, "*.log")), newStorageHost())
		s.waitRecords(t, 50)
		s.stop(t)
		assertExactlyOnce(t, requestIDs(s.logs.AllLogs()), 0, 50)
	}
}

// TestRotation rotates the log by renaming it while the server keeps writing
// to a fresh file of the same name: every line is read exactly once.
func TestRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "vllm.log")
	appendFile(t, path, vllmRequestLines(0, 100))
	cfg := testConfig("vllm", filepath.Join(dir, "vllm.log*"))
	s := startReceiver(t, cfg, newStorageHost())
	s.waitRecords(t, 100)

	for round := 1; round <= 3; round++ {
		// The last lines land just before the rename, as with a logger that
		// rotates by size.
		appendFile(t, path, vllmRequestLines(round*100, round*100+40))
		require.NoError(t, os.Rename(path, fmt.Sprintf("%s.%d", path, round)))
		appendFile(t, path, vllmRequestLines(round*100+40, round*100+100))
		s.waitRecords(t, round*100+100)
	}
	s.stop(t)
	assertExactlyOnce(t, requestIDs(s.logs.AllLogs()), 0, 400)
}
