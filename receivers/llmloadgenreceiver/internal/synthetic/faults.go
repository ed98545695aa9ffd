package synthetic

import (
	"time"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
	"github.com/otelcol-llm/otelcol-llm/receivers/llmloadgenreceiver/internal/config"
)

// faultSpec is how real instrumentation records one kind of failure: the
// error.type of the GenAI client span (the OpenAI SDK's exception classes,
// which GenAI instrumentations record), the HTTP status the provider answers
// and the app's server span returns, and the span status message.
type faultSpec struct {
	kind        string
	clientError string
	status      int
	message     string
	// streams: the failure happens after the stream started, so a time to
	// first chunk and some output tokens are recorded.
	streams bool
	// streamingOnly faults do not apply to non-streaming calls (embeddings).
	streamingOnly bool
}

// faultTable is data: one row per fault kind.
var faultTable = map[string]faultSpec{
	config.FaultRateLimit:     {kind: config.FaultRateLimit, clientError: "RateLimitError", status: 429, message: "Rate limit reached for requests. Please retry after the Retry-After interval."},
	config.FaultOverloaded:    {kind: config.FaultOverloaded, clientError: "InternalServerError", status: 503, message: "The server is overloaded or not ready yet."},
	config.FaultContextLength: {kind: config.FaultContextLength, clientError: "BadRequestError", status: 400, message: "This model's maximum context length is exceeded by the requested prompt and completion tokens."},
	config.FaultMidStream:     {kind: config.FaultMidStream, clientError: "APIError", status: 200, message: "The stream was terminated by the server before completion.", streams: true, streamingOnly: true},
	config.FaultCancel:        {kind: config.FaultCancel, clientError: genai.LoadgenErrorTypeContextCanceled, status: 499, message: "context canceled", streams: true},
	config.FaultTimeout:       {kind: config.FaultTimeout, clientError: "timeout", status: 504, message: "Request timed out."},
}

// Defaults of the fault parameters left at 0.
const (
	defaultRetryAfter    = time.Second
	defaultClientTimeout = 60 * time.Second
)

// fault is one configured fault, ready to draw.
type fault struct {
	spec       *faultSpec
	cum        float64 // cumulative probability
	retryAfter float64 // seconds
	maxRetries int
	timeout    float64 // seconds
}

func newFaults(cfgs []config.FaultConfig) []fault {
	out := make([]fault, 0, len(cfgs))
	cum := 0.0
	for _, c := range cfgs {
		spec := faultTable[c.Type]
		cum += c.Probability
		f := fault{spec: &spec, cum: cum, retryAfter: c.RetryAfter.Seconds(), maxRetries: c.MaxRetries, timeout: c.Timeout.Seconds()}
		if c.RetryAfter == 0 {
			f.retryAfter = defaultRetryAfter.Seconds()
		}
		if c.Timeout == 0 {
			f.timeout = defaultClientTimeout.Seconds()
		}
		out = append(out, f)
	}
	return out
}

// pickFault draws the fault of one request, nil for none.
func (g *generator) pickFault() *fault {
	if len(g.faults) == 0 {
		return nil
	}
	u := g.rng.Float64()
	for i := range g.faults {
		if u < g.faults[i].cum {
			return &g.faults[i]
		}
	}
	return nil
}
