package live

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/internal/mockllm"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/dataset"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/loadgen"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/metadata"
)

// datasetRecords reads every record of a dataset file in file order.
func datasetRecords(t *testing.T, cfg dataset.Config) []dataset.Record {
	t.Helper()
	cfg.Order = dataset.OrderSequential
	ix, err := dataset.Open(cfg, 1)
	require.NoError(t, err)
	defer ix.Close()
	out := make([]dataset.Record, ix.Summary().Kept)
	for i := range out {
		out[i], err = ix.Next()
		require.NoError(t, err)
	}
	return out
}

// TestLiveDatasetSendsRecords drives a real JSONL chat file and a real
// ShareGPT excerpt against the mock: every request carries one record's
// messages and, with ignore_eos, exactly the record's output length as
// max_tokens (the mock's ground truth shows both), and its span names the
// record's line.
func TestLiveDatasetSendsRecords(t *testing.T) {
	for _, tc := range []struct{ file, format string }{
		{"toy_chat_fine_tuning.head.jsonl", dataset.FormatJSONL},
		{"glaive_toolcall_en_demo.head.json", dataset.FormatShareGPT},
	} {
		t.Run(tc.format, func(t *testing.T) {
			mock := startMock(t, func(c *mockllm.Config) { c.OutputTokens, c.ITL = 4000, time.Millisecond })
			cfg := liveConfig(mock.URL(), 0, 50)
			cfg.Live.IgnoreEOS = true
			cfg.Live.Dataset.Path = filepath.Join("..", "dataset", "testdata", "real", tc.file)
			cfg.Live.Dataset.Format = tc.format
			cfg.Live.Dataset.Order = dataset.OrderSequential
			recs := datasetRecords(t, cfg.Live.Dataset)
			cfg.Requests = int64(2 * len(recs))
			run := startLive(t, cfg)
			spans := run.spans(t, int(cfg.Requests))
			run.stop(t)

			var wantPrompt, wantOut, gotPrompt, gotOut []int
			for range 2 {
				for _, r := range recs {
					wantPrompt, wantOut = append(wantPrompt, r.InputTokens), append(wantOut, r.OutputTokens)
				}
			}
			for _, rec := range mock.Records() {
				gotPrompt, gotOut = append(gotPrompt, rec.PromptTokens), append(gotOut, rec.PlannedTokens)
			}
			for _, s := range [][]int{wantPrompt, wantOut, gotPrompt, gotOut} {
				slices.Sort(s)
			}
			assert.Equal(t, wantPrompt, gotPrompt, "each request is one record's prompt")
			assert.Equal(t, wantOut, gotOut, "max_tokens is the record's output length")

			rows := map[int64]int{}
			for _, sp := range spans {
				row, ok := sp.Attributes().Get(attrLiveDatasetRow)
				require.True(t, ok, "span without %s", attrLiveDatasetRow)
				rows[row.Int()]++
				i := slices.IndexFunc(recs, func(r dataset.Record) bool { return r.Row == row.Int() })
				require.GreaterOrEqual(t, i, 0)
				mt, _ := sp.Attributes().Get(attrRequestMaxTok)
				assert.EqualValues(t, recs[i].OutputTokens, mt.Int())
				in, _ := sp.Attributes().Get(genai.AttrUsageInputTokens)
				assert.EqualValues(t, recs[i].InputTokens, in.Int(), "usage from the mock")
			}
			for _, r := range recs {
				assert.Equal(t, 2, rows[r.Row], "sequential order sends each record once per pass")
			}
		})
	}
}

// TestLiveDatasetErrorFailsStart: a malformed dataset stops the receiver at
// start with the file, line and field.
func TestLiveDatasetErrorFailsStart(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("{\"prompt\": \"ok\"}\n{\"prompt\": 3}\n"), 0o600))
	cfg := liveConfig("http://127.0.0.1:1", 1, 1)
	cfg.Live.Dataset.Path = p
	require.NoError(t, cfg.Validate())
	tr, err := New(&loadgen.Run{Config: cfg, Settings: receivertest.NewNopSettings(metadata.Type), Traces: new(consumertest.TracesSink)})
	require.NoError(t, err)
	err = tr.Start(context.Background(), componenttest.NewNopHost())
	require.ErrorContains(t, err, "live.dataset: dataset "+p+":2: prompt: must be a string or a list of text parts, got 3")
	require.NoError(t, tr.Shutdown(context.Background()))
}
