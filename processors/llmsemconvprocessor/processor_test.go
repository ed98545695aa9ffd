package llmsemconvprocessor

import (
	"sort"
	"testing"

	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/goleak"
	"go.yaml.in/yaml/v3"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func unmarshalYAMLConfig(raw []byte, cfg *Config) error {
	var m map[string]any
	if err := yaml.Unmarshal(raw, &m); err != nil {
		return err
	}
	return confmap.NewFromStringMap(m).Unmarshal(cfg)
}

func attributeKey(k string) attribute.Key { return attribute.Key(k) }

func sortStrings(s []string) { sort.Strings(s) }
