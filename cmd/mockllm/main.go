// Command mockllm is an OpenAI-compatible streaming mock server with a
// latency model, fault injection and per-request ground truth, for tests,
// demos and benchmarks of LLM load generators and pipelines.
//
//	mockllm -addr 127.0.0.1:8000 -ttft 200ms -itl 20ms -output-tokens 128 \
//	        -faults rate_limit=0.01,drop=0.005 -otlp-endpoint 127.0.0.1:4317
//
// Endpoints: POST /v1/chat/completions, POST /v1/completions,
// POST /v1/embeddings, GET /v1/models, GET /mock/requests/{id} (ground
// truth of one request), GET /mock/stats, GET /healthz.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"

	"github.com/otelcol-llm/otelcol-llm/internal/mockllm"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "mockllm:", err)
		os.Exit(2)
	}
}

func run(args []string, stderr io.Writer) error {
	o, err := parseArgs(args, stderr)
	if err != nil {
		return err
	}
	var opts []mockllm.Option
	var tp *sdktrace.TracerProvider
	if o.otlpEndpoint != "" {
		if tp, err = tracerProvider(o.otlpEndpoint, o.service); err != nil {
			return err
		}
		opts = append(opts, mockllm.WithTracerProvider(tp))
	}
	srv, err := mockllm.New(o.cfg, opts...)
	if err != nil {
		return err
	}
	if err := srv.Start(o.addr); err != nil {
		return err
	}
	log.SetOutput(stderr)
	log.Printf("mockllm listening on %s (models %s, ttft %v, itl %v, output %d tokens)",
		srv.URL(), strings.Join(o.cfg.Models, ","), o.cfg.TTFT, o.cfg.ITL, o.cfg.OutputTokens)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	return shutdown(srv, tp)
}

// options are the command line: the server's configuration and the
// command's own settings.
type options struct {
	cfg                         mockllm.Config
	addr, otlpEndpoint, service string
}

// parseArgs reads the command line.
func parseArgs(args []string, stderr io.Writer) (options, error) {
	o := options{cfg: mockllm.DefaultConfig()}
	cfg := &o.cfg
	fs := flag.NewFlagSet("mockllm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8000", "listen address")
	models := fs.String("models", strings.Join(cfg.Models, ","), "comma-separated model ids; the first is the default")
	fs.IntVar(&cfg.ContextWindow, "context-window", cfg.ContextWindow, "context window in tokens (prompt + max_tokens above it gets a 400)")
	latencyFlags(fs, cfg)
	capacityFlags(fs, cfg)
	faults := fs.String("faults", "", "fault probabilities, kind=p[,kind=p]; kinds: "+strings.Join(mockllm.Faults, ", "))
	fs.DurationVar(&cfg.RetryAfter, "retry-after", cfg.RetryAfter, "Retry-After of rate_limit responses")
	fs.DurationVar(&cfg.StallDuration, "stall", cfg.StallDuration, "pause of a stalled stream")
	fs.DurationVar(&cfg.SlowHeaders, "slow-headers", cfg.SlowHeaders, "header delay of slow_headers")
	fs.Uint64Var(&cfg.Seed, "seed", 0, "seed of the latency model (0: random)")
	fs.IntVar(&cfg.HistorySize, "history", cfg.HistorySize, "ground-truth records kept")
	fs.BoolVar(&cfg.RecordTokenTimes, "record-token-times", cfg.RecordTokenTimes, "keep every chunk's write time in the ground truth")
	fs.StringVar(&o.otlpEndpoint, "otlp-endpoint", "", "export server spans over OTLP/gRPC (insecure) to host:port; empty disables")
	fs.StringVar(&o.service, "service-name", "mockllm", "service.name of exported spans")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	cfg.Models = strings.Split(*models, ",")
	var err error
	cfg.FaultRates, err = mockllm.ParseFaultRates(*faults)
	return o, err
}

// latencyFlags are the flags of the latency model and of the completions'
// length and shape.
func latencyFlags(fs *flag.FlagSet, cfg *mockllm.Config) {
	fs.DurationVar(&cfg.TTFT, "ttft", cfg.TTFT, "mean time to first token")
	fs.DurationVar(&cfg.PrefillPerToken, "prefill-per-token", cfg.PrefillPerToken, "extra time to first token per prompt token")
	fs.IntVar(&cfg.PrefixCacheBlockTokens, "prefix-cache-block-tokens", 0, "prefix cache block size in tokens; cached prompt tokens take no prefill time (0: no cache)")
	fs.IntVar(&cfg.PrefixCacheBlocks, "prefix-cache-blocks", cfg.PrefixCacheBlocks, "prefix cache capacity in blocks (least recently used forgotten first)")
	fs.DurationVar(&cfg.ITL, "itl", cfg.ITL, "mean inter-token latency")
	fs.Float64Var(&cfg.Jitter, "jitter", cfg.Jitter, "relative spread of TTFT and each gap (0..1)")
	fs.IntVar(&cfg.OutputTokens, "output-tokens", cfg.OutputTokens, "mean completion length in tokens (max_tokens caps it)")
	fs.Float64Var(&cfg.OutputJitter, "output-jitter", cfg.OutputJitter, "relative spread of the completion length (0..1)")
	fs.IntVar(&cfg.TokensPerChunk, "tokens-per-chunk", cfg.TokensPerChunk, "tokens per streamed content chunk")
	fs.IntVar(&cfg.ReasoningTokens, "reasoning-tokens", cfg.ReasoningTokens, "a reasoning model: the first N tokens of a chat stream are thinking, before the answer")
	fs.StringVar(&cfg.ReasoningField, "reasoning-field", cfg.ReasoningField, "the delta field of the thinking: reasoning_content (vLLM, llama.cpp) or reasoning (Ollama)")
	fs.IntVar(&cfg.EmbeddingDimensions, "embedding-dimensions", cfg.EmbeddingDimensions, "embedding vector size")
}

// capacityFlags are the flags of the simulated server's capacity: its slots,
// queue, batching slowdown and KV cache.
func capacityFlags(fs *flag.FlagSet, cfg *mockllm.Config) {
	fs.IntVar(&cfg.MaxRunning, "max-running", cfg.MaxRunning, "completion requests served at once; later ones queue, and the wait is part of their TTFT (0: unlimited)")
	fs.IntVar(&cfg.MaxQueue, "max-queue", cfg.MaxQueue, "requests that may wait for a slot; beyond it a 503 at once (0: unlimited)")
	fs.Float64Var(&cfg.BatchSlowdown, "batch-slowdown", cfg.BatchSlowdown, "each gap is multiplied by 1 + this × running/max-running (needs -max-running)")
	fs.IntVar(&cfg.KVCacheTokens, "kv-cache-tokens", cfg.KVCacheTokens, "KV cache in tokens: a prompt waits until it fits, and when a new token does not, the newest request is preempted and recomputed (0: unlimited)")
}

// tracerProvider exports the server's spans over OTLP/gRPC to endpoint.
func tracerProvider(endpoint, service string) (*sdktrace.TracerProvider, error) {
	exp, err := otlptracegrpc.New(context.Background(), otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure())
	if err != nil {
		return nil, fmt.Errorf("otlp-endpoint: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName(service)))), nil
}

// shutdown stops the server and the span export, within 10 s, and logs what
// the server served.
func shutdown(srv *mockllm.Server, tp *sdktrace.TracerProvider) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := srv.Shutdown(ctx)
	if tp != nil {
		err = errors.Join(err, tp.Shutdown(ctx))
	}
	st := srv.Stats()
	log.Printf("mockllm stopped: %d requests, %d completed streams, peak %d concurrent streams, peak queue %d, %d rejected (queue full)",
		st.Requests, st.Completed, st.MaxStreams, st.MaxQueued, st.Rejected)
	return err
}
