package config

import (
	"errors"
	"fmt"
)

// The model mix (models) and the sampled distributions of its latency and
// length models, with their validation.

// ModelConfig describes one model of the mix and its latency and length
// models.
type ModelConfig struct {
	Name     string  `mapstructure:"name"`
	Provider string  `mapstructure:"provider"`
	Weight   float64 `mapstructure:"weight"`
	// ServerAddress is the provider endpoint's host (server.address).
	ServerAddress string `mapstructure:"server_address"`
	// ContextWindow is the model's context size in tokens: a request whose
	// prompt and output exceed it is cut (finish_reason length).
	ContextWindow int `mapstructure:"context_window"`
	// Embedding marks an embeddings model; EmbeddingDimensions is its
	// vector size.
	Embedding           bool `mapstructure:"embedding"`
	EmbeddingDimensions int  `mapstructure:"embedding_dimensions"`
	// TTFT is the time to first token, in seconds (for an embedding model,
	// the response time).
	TTFT Distribution `mapstructure:"ttft"`
	// ITL is each request's mean inter-token latency (time per output token
	// after the first), in seconds.
	ITL Distribution `mapstructure:"itl"`
	// InputTokens and OutputTokens are prompt and completion lengths.
	InputTokens  Distribution `mapstructure:"input_tokens"`
	OutputTokens Distribution `mapstructure:"output_tokens"`
}

// Distribution is a sampled quantity. Type lognormal (default) takes p50 and
// p99, or mu and sigma; normal takes mean and stddev; uniform takes min and
// max; exponential takes mean; constant takes value.
type Distribution struct {
	Type   string  `mapstructure:"type"`
	P50    float64 `mapstructure:"p50"`
	P99    float64 `mapstructure:"p99"`
	Mu     float64 `mapstructure:"mu"`
	Sigma  float64 `mapstructure:"sigma"`
	Mean   float64 `mapstructure:"mean"`
	StdDev float64 `mapstructure:"stddev"`
	Min    float64 `mapstructure:"min"`
	Max    float64 `mapstructure:"max"`
	Value  float64 `mapstructure:"value"`
}

func (cfg *Config) validateModels() error {
	if len(cfg.Models) == 0 {
		return errors.New("models: at least one model is required")
	}
	var errs []error
	seen := map[string]bool{}
	var chatSum, embSum float64
	for i, m := range cfg.Models {
		p := fmt.Sprintf("models[%d]", i)
		if m.Name == "" {
			errs = append(errs, fmt.Errorf("%s.name: must not be empty", p))
		} else if seen[m.Name] {
			errs = append(errs, fmt.Errorf("%s.name: duplicate model %q", p, m.Name))
		}
		seen[m.Name] = true
		errs = append(errs, m.validate(p)...)
		if m.Embedding {
			embSum += m.Weight
		} else {
			chatSum += m.Weight
		}
	}
	needChat, needEmb := cfg.modelKindsNeeded()
	if needChat && chatSum <= 0 {
		errs = append(errs, errors.New("models: the chat, rag and agent scenarios need a chat model (embedding: false) with weight > 0"))
	}
	if needEmb && embSum <= 0 {
		errs = append(errs, errors.New("models: the embeddings and rag scenarios need an embedding model (embedding: true) with weight > 0"))
	}
	return errors.Join(errs...)
}

// validate checks one model's own fields; p is its path (models[i]).
func (m *ModelConfig) validate(p string) []error {
	var errs []error
	if m.Provider == "" {
		errs = append(errs, fmt.Errorf("%s.provider: must not be empty (e.g. openai, anthropic, aws.bedrock)", p))
	}
	if err := finiteNonNeg(p+".weight", m.Weight); err != nil {
		errs = append(errs, err)
	}
	if m.ContextWindow < 1 {
		errs = append(errs, fmt.Errorf("%s.context_window: must be >= 1 token, got %d", p, m.ContextWindow))
	}
	if m.Embedding {
		if m.EmbeddingDimensions < 1 {
			errs = append(errs, fmt.Errorf("%s.embedding_dimensions: must be >= 1 for an embedding model, got %d", p, m.EmbeddingDimensions))
		}
	} else {
		errs = append(errs, m.ITL.validate(p+".itl"), m.OutputTokens.validate(p+".output_tokens"))
	}
	return append(errs, m.TTFT.validate(p+".ttft"), m.InputTokens.validate(p+".input_tokens"))
}

// modelKindsNeeded tells whether the scenarios with weight need a chat
// model and an embedding model.
func (cfg *Config) modelKindsNeeded() (chat, embedding bool) {
	for _, s := range cfg.Scenarios {
		if s.Weight <= 0 {
			continue
		}
		switch s.Type {
		case ScenarioEmbeddings:
			embedding = true
		case ScenarioRAG:
			embedding, chat = true, true
		case ScenarioChat, ScenarioAgent:
			chat = true
		}
	}
	return chat, embedding
}

// Distribution types.
const (
	DistLogNormal   = "lognormal"
	DistNormal      = "normal"
	DistUniform     = "uniform"
	DistExponential = "exponential"
	DistConstant    = "constant"
)

var allowedDists = []string{DistLogNormal, DistNormal, DistUniform, DistExponential, DistConstant}

func (d *Distribution) validate(field string) error {
	t := d.Type
	if t == "" {
		t = DistLogNormal
	}
	if err := oneOf(field+".type", t, allowedDists); err != nil {
		return err
	}
	for name, v := range map[string]float64{"p50": d.P50, "p99": d.P99, "sigma": d.Sigma, "mean": d.Mean, "stddev": d.StdDev, "min": d.Min, "max": d.Max, "value": d.Value} {
		if err := finiteNonNeg(field+"."+name, v); err != nil {
			return err
		}
	}
	return d.validateShape(field, t)
}

// validateShape checks the parameters that distribution type t needs.
func (d *Distribution) validateShape(field, t string) error {
	switch t {
	case DistLogNormal:
		if d.P50 > 0 || d.P99 > 0 {
			if d.P50 <= 0 {
				return fmt.Errorf("%s.p50: must be > 0, got %v", field, d.P50)
			}
			if d.P99 < d.P50 {
				return fmt.Errorf("%s.p99: must be >= %s.p50 (%v), got %v", field, field, d.P50, d.P99)
			}
		} else if d.Sigma <= 0 {
			return fmt.Errorf("%s: lognormal needs p50 and p99, or mu and sigma (> 0)", field)
		}
	case DistNormal:
		if d.Mean <= 0 {
			return fmt.Errorf("%s.mean: must be > 0, got %v", field, d.Mean)
		}
	case DistUniform:
		if d.Max < d.Min || d.Max == 0 {
			return fmt.Errorf("%s.max: must be > 0 and >= %s.min (%v), got %v", field, field, d.Min, d.Max)
		}
	case DistExponential:
		if d.Mean <= 0 {
			return fmt.Errorf("%s.mean: must be > 0, got %v", field, d.Mean)
		}
	}
	return nil
}
