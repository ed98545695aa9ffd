// Package servermetrics is what the inference servers' own Prometheus
// /metrics mean: a table of names by role for each server (vLLM V0 and V1,
// SGLang, TGI, llama.cpp; servermetrics.yaml, data rather than code), a
// reader of one scrape's text by role, and the slope test that tells a
// growing queue from noise. load_report reads a run's scrapes through the
// table; llm_loadgen's sweep reads the server between its steps.
package servermetrics // import "github.com/otelcol-llm/otelcol-llm/internal/servermetrics"

import (
	_ "embed"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/otelcol-llm/otelcol-llm/internal/genai"
)

// Roles: what a metric means, whatever the server calls it.
const (
	KVCache       = "kv_cache_usage"  // gauge, fraction 0..1
	Running       = "running"         // gauge, requests in the running batch
	Waiting       = "waiting"         // gauge, requests in the queue
	PrefixHitRate = "prefix_hit_rate" // gauge, fraction 0..1
	Preemptions   = "preemptions"     // counter
	PrefixQueries = "prefix_queries"  // counter (tokens or blocks)
	PrefixHits    = "prefix_hits"     // counter, same unit as PrefixQueries
	PromptTokens  = "prompt_tokens"   // counter
	GenTokens     = "generation_tokens"
	TTFT          = "ttft" // histograms, seconds
	ITL           = "itl"
	E2E           = "e2e"
	QueueTime     = "queue_time"
	PrefillTime   = "prefill_time"
	DecodeTime    = "decode_time"
)

// Kind is a role's instrument.
type Kind uint8

const (
	Gauge Kind = iota + 1
	Counter
	Histogram
)

var roleKinds = map[string]Kind{
	KVCache: Gauge, Running: Gauge, Waiting: Gauge, PrefixHitRate: Gauge,
	Preemptions: Counter, PrefixQueries: Counter, PrefixHits: Counter, PromptTokens: Counter, GenTokens: Counter,
	TTFT: Histogram, ITL: Histogram, E2E: Histogram, QueueTime: Histogram, PrefillTime: Histogram, DecodeTime: Histogram,
}

// The roles of each kind, in report order.
var (
	GaugeRoles     = []string{KVCache, Running, Waiting, PrefixHitRate}
	CounterRoles   = []string{Preemptions, PrefixQueries, PrefixHits, PromptTokens, GenTokens}
	HistogramRoles = []string{TTFT, ITL, E2E, QueueTime, PrefillTime, DecodeTime}
)

// IsFraction reports whether a gauge role is a fraction (0..1), which a
// scrape's series combine by their maximum rather than their sum; a value
// below 0 means "none" (vLLM V0's hit rate with prefix caching off).
func IsFraction(role string) bool { return role == KVCache || role == PrefixHitRate }

//go:embed servermetrics.yaml
var tableYAML []byte

// Def is one name of the table.
type Def struct {
	Server, Role string
	Kind         Kind
	Rank         int // position among the role's names: the lowest present wins
	Scale        float64
	Name         string
}

type tableFile struct {
	Servers []struct {
		Name       string                  `yaml:"name"`
		ModelLabel string                  `yaml:"model_label"`
		Roles      map[string][]scaledName `yaml:"roles"`
	} `yaml:"servers"`
}

// scaledName is a metric name with the factor to the role's unit: a plain
// string, or {name, scale}.
type scaledName struct {
	Name  string  `yaml:"name"`
	Scale float64 `yaml:"scale"`
}

func (n *scaledName) UnmarshalYAML(v *yaml.Node) error {
	if v.Kind == yaml.ScalarNode {
		n.Name, n.Scale = v.Value, 1
		return nil
	}
	type plain scaledName
	p := plain{Scale: 1}
	if err := v.Decode(&p); err != nil {
		return err
	}
	*n = scaledName(p)
	return nil
}

// table indexes the embedded table by metric name, without a counter's
// _total.
var table = mustTable(tableYAML)

func mustTable(data []byte) map[string]Def {
	m, err := ParseTable(data)
	if err != nil {
		panic(fmt.Sprintf("servermetrics.yaml: %v", err)) // embedded; checked by its test
	}
	return m
}

// ParseTable reads a table in servermetrics.yaml's format, indexed by name
// without a counter's _total; an unknown role, a name listed twice or a
// scale that is not positive is an error naming the server and the name.
func ParseTable(data []byte) (map[string]Def, error) {
	var f tableFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	out := map[string]Def{}
	for _, s := range f.Servers {
		for role, names := range s.Roles {
			kind, ok := roleKinds[role]
			if !ok {
				return nil, fmt.Errorf("server %s: unknown role %q", s.Name, role)
			}
			for i, n := range names {
				key := strings.TrimSuffix(n.Name, genai.PrometheusCounterSuffix)
				if _, dup := out[key]; dup {
					return nil, fmt.Errorf("server %s: %s is listed twice", s.Name, n.Name)
				}
				if !(n.Scale > 0) {
					return nil, fmt.Errorf("server %s: %s: scale must be positive", s.Name, n.Name)
				}
				out[key] = Def{Server: s.Name, Role: role, Kind: kind, Rank: i, Scale: n.Scale, Name: n.Name}
			}
		}
	}
	return out, nil
}

// Lookup finds a metric name (with or without a counter's _total).
func Lookup(name string) (Def, bool) {
	d, ok := table[strings.TrimSuffix(name, genai.PrometheusCounterSuffix)]
	return d, ok
}
