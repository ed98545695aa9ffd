package llmloadgenreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver"

import (
	"fmt"
	"sort"

	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/dataset"
	"go.uber.org/zap"
)

// openDataset reads live.dataset, when set, and logs what it found.
func (r *liveRunner) openDataset() error {
	dc := r.lc.Dataset
	if dc.Path == "" {
		return nil
	}
	if dc.MaxInputTokens == 0 || dc.MaxInputTokens > r.prompts.maxIn {
		dc.MaxInputTokens = r.prompts.maxIn // prompt plus max_tokens fit the context window
	}
	ix, err := dataset.Open(dc, r.plan.localSeed()^0x9e3779b97f4a7c15)
	if err != nil {
		return fmt.Errorf("live.dataset: %w", err)
	}
	r.dataset = ix
	s := ix.Summary()
	r.dsLine = describeDataset(ix.Name(), dc.Format, s)
	r.logger.Info("llm_loadgen live dataset read", zap.String("path", dc.Path), zap.String("format", dc.Format),
		zap.Int64("records", s.Records), zap.Int("kept", s.Kept), zap.Any("skipped", s.Skipped),
		zap.String("token_counts", "estimated (4 bytes per token)"))
	return nil
}

// describeDataset is the console line of a dataset read at start.
func describeDataset(name, format string, s dataset.Summary) string {
	line := fmt.Sprintf("llm_loadgen: dataset %s (%s): %d records, %d used", name, format, s.Records, s.Kept)
	reasons := make([]string, 0, len(s.Skipped))
	for r := range s.Skipped {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	for i, r := range reasons {
		sep := ", "
		if i == 0 {
			sep = "; skipped: "
		}
		line += fmt.Sprintf("%s%d %s", sep, s.Skipped[r], r)
	}
	return line + "; token counts estimated at 4 bytes per token"
}

// body renders request res: a dataset record, or a synthetic prompt of a
// sampled length.
func (r *liveRunner) body(res *liveResult) ([]byte, int, error) {
	if r.dataset == nil {
		r.inMu.Lock()
		want := r.inputs.tokens(1)
		r.inMu.Unlock()
		return r.prompts.build(res.Seq, want)
	}
	rec, err := r.dataset.Next()
	if err != nil {
		return nil, 0, err
	}
	res.DatasetRow, res.MaxTokens = rec.Row, rec.OutputTokens
	if res.MaxTokens == 0 {
		res.MaxTokens = r.lc.MaxTokens
	}
	body, err := r.prompts.buildMessages(rec.Messages, res.MaxTokens)
	return body, rec.InputTokens, err
}
