//go:build e2e

// Package e2e runs the built otelcol-llm binary as a user would: real configs,
// real OTLP clients and servers, all on loopback. `make e2e` builds the binary
// once and passes its path in OTELCOL_LLM_BINARY; every test here shares it.
package e2e
