// Package spilloverconnector implements the spillover connector: it hands
// every batch of spans to a primary pipeline (an exporter that sends at once,
// without a sending queue), and a batch the primary refuses to a spill
// pipeline (an exporter whose sending queue lives on a storage extension).
// Data reaches the disk only while the backend cannot take it, so a gateway
// keeps a backlog across restarts without writing and reading back every
// span it forwards.
package spilloverconnector // import "github.com/otelcol-llm/otelcol-llm/connectors/spilloverconnector"
