package llmloadgenreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver"

// LiveConfig configures live mode (mode: live): load driven against an
// OpenAI-compatible streaming endpoint. It is owned by the live-mode
// implementation; synthetic mode ignores it.
type LiveConfig struct{}

// Validate is called by the collector's configuration walk in every mode, so
// it must accept the default (unset) live section. Checks that apply only
// when mode is live belong in validateLive.
func (*LiveConfig) Validate() error { return nil }

// validateLive checks the live section when mode is live; Config.Validate
// calls it.
func (*LiveConfig) validateLive() error { return nil }
