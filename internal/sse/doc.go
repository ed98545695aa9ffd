// Package sse is a strict, incremental parser for Server-Sent Events as
// OpenAI-compatible streaming endpoints send them, plus the chunk types of
// the chat/completions streaming wire format.
//
// The parser follows the WHATWG event-stream grammar: lines end in LF, CR or
// CRLF; lines starting with ':' are comments (keep-alives); "data" lines of
// one event are joined with '\n'; a blank line dispatches the event. It never
// waits for a buffer to fill: each Read of the underlying stream is scanned
// as soon as it returns, and every event is timestamped when its dispatching
// blank line is parsed. Lines longer than the default 64 KiB of
// bufio.Scanner are supported up to a configurable maximum event size.
package sse // import "github.com/otelcol-llm/otelcol-llm/internal/sse"
