package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func shardedConfig(index, count int) *Config {
	cfg := Default()
	cfg.Mode = ModeLive
	cfg.RunID = "run-42"
	cfg.StartAt = "2026-11-29T20:00:00Z"
	cfg.Shard = ShardConfig{Index: new(index), Count: count}
	return cfg
}

func TestShardValidation(t *testing.T) {
	tests := []struct {
		name   string
		env    string // JOB_COMPLETION_INDEX; "-" leaves it unset
		mutate func(*Config)
		errs   []string
	}{
		{name: "valid", env: "-", mutate: func(*Config) {}},
		{name: "index from env", env: "2", mutate: func(c *Config) { c.Shard.Index = nil }},
		{name: "count zero", env: "-", mutate: func(c *Config) { c.Shard.Count = 0 }, errs: []string{"shard.count: must be >= 1, got 0"}},
		{name: "index equals count", env: "-", mutate: func(c *Config) { c.Shard.Index = new(3) }, errs: []string{"shard.index: 3 is out of range; must be 0 to shard.count-1 (2)"}},
		{name: "negative index", env: "-", mutate: func(c *Config) { c.Shard.Index = new(-1) }, errs: []string{"shard.index: -1 is out of range"}},
		{name: "env index out of range", env: "7", mutate: func(c *Config) { c.Shard.Index = nil }, errs: []string{"shard.index: 7 (from JOB_COMPLETION_INDEX) is out of range"}},
		{name: "env index not a number", env: "x", mutate: func(c *Config) { c.Shard.Index = nil }, errs: []string{`JOB_COMPLETION_INDEX="x" is not an integer`}},
		{name: "no index anywhere", env: "-", mutate: func(c *Config) { c.Shard.Index = nil }, errs: []string{"shard.index: not set and JOB_COMPLETION_INDEX is not in the environment"}},
		{name: "bad start_at", env: "-", mutate: func(c *Config) { c.StartAt = "tomorrow" }, errs: []string{`start_at: "tomorrow" is not an RFC 3339 time`}},
		{name: "sharded without run_id and start_at", env: "-", mutate: func(c *Config) { c.RunID, c.StartAt = "", "" },
			errs: []string{"run_id: required when shard.count > 1", "start_at: required when shard.count > 1"}},
		{name: "synthetic", env: "-", mutate: func(c *Config) { c.Mode = ModeSynthetic },
			errs: []string{"shard.count: sharding applies to mode live only", "start_at: applies to mode live only", "run_id: applies to mode live only"}},
		{name: "unsharded default", env: "-", mutate: func(c *Config) { c.Shard, c.RunID, c.StartAt = ShardConfig{Count: 1}, "", "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env == "-" {
				t.Setenv(EnvJobCompletionIndex, "")
			} else {
				t.Setenv(EnvJobCompletionIndex, tt.env)
			}
			cfg := shardedConfig(1, 3)
			tt.mutate(cfg)
			err := cfg.Validate()
			if len(tt.errs) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, e := range tt.errs {
				assert.Contains(t, err.Error(), e)
			}
		})
	}
}

func TestShardIndexFromJobCompletionIndex(t *testing.T) {
	t.Setenv(EnvJobCompletionIndex, "2")
	cfg := shardedConfig(0, 4)
	cfg.Shard.Index = nil
	idx, fromEnv, err := cfg.Shard.ResolveIndex()
	require.NoError(t, err)
	assert.Equal(t, 2, idx)
	assert.True(t, fromEnv)
	cfg.Shard.Index = new(1) // a configured index wins
	idx, fromEnv, err = cfg.Shard.ResolveIndex()
	require.NoError(t, err)
	assert.Equal(t, 1, idx)
	assert.False(t, fromEnv)
}
