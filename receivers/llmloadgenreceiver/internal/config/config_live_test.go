package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/config/configopaque"
)

// live.transport auto takes the raw client exactly when it can serve every
// client setting, and says which setting sent the run to net/http.
func TestRawTransportChoice(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*LiveConfig)
		raw    bool
		why    string
	}{
		{name: "default http endpoint", raw: true},
		{name: "upper-case scheme", mutate: func(l *LiveConfig) { l.Client.Endpoint = "HTTP://127.0.0.1:8000/v1" }, raw: true},
		{name: "custom headers", mutate: func(l *LiveConfig) {
			l.Client.Headers = configopaque.MapList{}
			l.Client.Headers.Set("X-Tenant", "a")
		}, raw: true},
		{name: "tls", mutate: func(l *LiveConfig) { l.Client.Endpoint = "https://h/v1" }, why: "not http://"},
		{name: "proxy", mutate: func(l *LiveConfig) { l.Client.ProxyURL = "http://proxy:3128" }, why: "live.client.proxy_url"},
		{name: "compression", mutate: func(l *LiveConfig) { l.Client.Compression = "gzip" }, why: "live.client.compression"},
		{name: "host header", mutate: func(l *LiveConfig) {
			l.Client.Headers = configopaque.MapList{}
			l.Client.Headers.Set("host", "other")
		}, why: "sets Host"},
		{name: "net_http asked", mutate: func(l *LiveConfig) { l.Transport = TransportNetHTTP }, why: "live.transport is net_http"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := Default().Live
			l.Client.Endpoint = "http://127.0.0.1:8000/v1"
			if tt.mutate != nil {
				tt.mutate(&l)
			}
			raw, why := l.RawTransport()
			assert.Equal(t, tt.raw, raw)
			assert.Contains(t, why, tt.why)
			if tt.raw {
				assert.Empty(t, why)
			}
		})
	}
}
