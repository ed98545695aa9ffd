package llmloadgenreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver"

import "github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"

// Config is the receiver's configuration (internal/config).
type Config = config.Config
