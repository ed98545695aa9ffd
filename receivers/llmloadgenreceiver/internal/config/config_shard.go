package config

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// EnvJobCompletionIndex is set by Kubernetes in every pod of an Indexed Job
// (0 to completions−1); it is the default shard index.
const EnvJobCompletionIndex = "JOB_COMPLETION_INDEX"

// ShardConfig splits one run across several load-generator processes (for
// example the pods of a Kubernetes Indexed Job). Each shard generates its
// part of one global schedule, so that the union of all shards is the
// arrival process the configuration describes.
type ShardConfig struct {
	// Index is this process's shard, 0 to Count−1. When it is not set it is
	// read from JOB_COMPLETION_INDEX; without that variable it is 0.
	Index *int `mapstructure:"index"`
	// Count is the number of shards of the run; 1 means not sharded.
	Count int `mapstructure:"count"`
}

// resolveIndex returns the shard index: the configured one, else
// JOB_COMPLETION_INDEX, else 0 (for an unsharded run). The boolean tells
// whether it came from the environment.
func (s ShardConfig) ResolveIndex() (int, bool, error) {
	if s.Index != nil {
		return *s.Index, false, nil
	}
	v, ok := os.LookupEnv(EnvJobCompletionIndex)
	if !ok || strings.TrimSpace(v) == "" {
		if s.Count > 1 {
			return 0, false, fmt.Errorf("shard.index: not set and %s is not in the environment; set shard.index (0 to shard.count-1 = %d) or run as a Kubernetes Indexed Job", EnvJobCompletionIndex, s.Count-1)
		}
		return 0, false, nil
	}
	i, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, true, fmt.Errorf("shard.index: not set, and %s=%q is not an integer", EnvJobCompletionIndex, v)
	}
	return i, true, nil
}

// validateShard checks shard, run_id and start_at, which tie the shards of a
// distributed run together.
func (cfg *Config) validateShard() error {
	var errs []error
	s := cfg.Shard
	if s.Count < 1 {
		errs = append(errs, fmt.Errorf("shard.count: must be >= 1, got %d", s.Count))
	}
	idx, fromEnv, err := s.ResolveIndex()
	switch {
	case err != nil:
		errs = append(errs, err)
	case s.Count >= 1 && (idx < 0 || idx >= s.Count):
		src := ""
		if fromEnv {
			src = " (from " + EnvJobCompletionIndex + ")"
		}
		errs = append(errs, fmt.Errorf("shard.index: %d%s is out of range; must be 0 to shard.count-1 (%d)", idx, src, s.Count-1))
	}
	errs = append(errs, cfg.validateRunTies()...)
	if cfg.Mode != ModeLive {
		errs = append(errs, cfg.liveOnlyShardErrors()...)
	}
	return errors.Join(errs...)
}

// validateRunTies checks start_at and run_id, which every shard of a run
// with shard.count above 1 must share.
func (cfg *Config) validateRunTies() []error {
	var errs []error
	if cfg.StartAt != "" {
		if _, err := time.Parse(time.RFC3339Nano, cfg.StartAt); err != nil {
			errs = append(errs, fmt.Errorf("start_at: %q is not an RFC 3339 time such as 2026-11-29T20:00:00Z: %w", cfg.StartAt, err))
		}
	}
	if len(cfg.RunID) > 128 {
		errs = append(errs, fmt.Errorf("run_id: at most 128 characters, got %d", len(cfg.RunID)))
	}
	if cfg.Shard.Count > 1 {
		if cfg.RunID == "" {
			errs = append(errs, errors.New("run_id: required when shard.count > 1; every shard of the run must carry the same id so that the gateway's report can merge them"))
		}
		if cfg.StartAt == "" {
			errs = append(errs, errors.New("start_at: required when shard.count > 1; every shard must start its part of the schedule at the same absolute time"))
		}
	}
	return errs
}

// liveOnlyShardErrors names the sharding settings set outside mode live.
func (cfg *Config) liveOnlyShardErrors() []error {
	var errs []error
	if cfg.Shard.Count > 1 {
		errs = append(errs, fmt.Errorf("shard.count: sharding applies to mode live only, got mode %s", cfg.Mode))
	}
	if cfg.StartAt != "" {
		errs = append(errs, fmt.Errorf("start_at: applies to mode live only (synthetic mode uses start_time), got mode %s", cfg.Mode))
	}
	if cfg.RunID != "" {
		errs = append(errs, fmt.Errorf("run_id: applies to mode live only, got mode %s", cfg.Mode))
	}
	return errs
}
