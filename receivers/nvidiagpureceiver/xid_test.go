package nvidiagpureceiver

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
)

func TestXIDTable(t *testing.T) {
	require.NotEmpty(t, xidTable)
	for code, info := range xidTable {
		assert.Equal(t, code, info.Code)
		assert.NotEmpty(t, info.Action, "XID %d has no action", code)
	}
	assert.Equal(t, "fatal", lookupXID(79).Severity)
	assert.Equal(t, "Double bit ECC error", lookupXID(48).Meaning)
	unknown := lookupXID(99999)
	assert.Equal(t, "Unknown XID", unknown.Meaning)
	assert.Equal(t, "warn", unknown.Severity)
}

func TestXIDTableRejectsBadRows(t *testing.T) {
	tests := map[string]string{
		"duplicate":    "- {code: 1, meaning: a, severity: warn, origin: driver}\n- {code: 1, meaning: b, severity: warn, origin: driver}\n",
		"bad severity": "- {code: 1, meaning: a, severity: loud, origin: driver}\n",
		"bad origin":   "- {code: 1, meaning: a, severity: warn, origin: moon}\n",
		"no meaning":   "- {code: 1, severity: warn, origin: driver}\n",
		"not yaml":     "{",
	}
	for name, data := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := parseXIDTable([]byte(data))
			assert.Error(t, err)
		})
	}
}

func TestEventTypes(t *testing.T) {
	seen := map[uint64]bool{}
	for _, e := range eventTypes {
		assert.False(t, seen[e.mask], "mask %d twice", e.mask)
		seen[e.mask] = true
		assert.NotZero(t, e.severity)
	}
	for _, name := range defaultEventTypes {
		_, ok := eventTypesByName[name]
		assert.True(t, ok, name)
	}
	e, ok := eventTypeByMask(nvml.EventTypeGpuUnavailableError)
	require.True(t, ok)
	assert.Equal(t, "gpu_unavailable", e.name)
	assert.Equal(t, plog.SeverityNumberFatal, e.severity)
}
