// Package httpstream is a small HTTP/1.1 client for streaming responses
// (Server-Sent Events of LLM completions) that measures when each read's
// bytes arrived.
//
// It differs from net/http in two ways that matter to a load generator:
//
//   - Every read is stamped with the time the kernel received the bytes
//     (SO_TIMESTAMPNS, read with recvmsg inside the runtime poller through
//     syscall.RawConn), next to the time the read returned in user space.
//     Under CPU pressure the client's own scheduling delay is then visible
//     instead of being added to every latency. See Body.ReadTime.
//   - A request costs one goroutine, the caller's: there are no reader or
//     writer goroutines per connection, and a connection holds one small
//     read buffer (4 KiB by default).
//
// Scope: POST to one http:// origin, HTTP/1.1 keep-alive with an idle pool,
// chunked, Content-Length and read-until-close bodies. TLS, proxies,
// redirects, compression and HTTP/2 stay with net/http.
//
// Responses are read with net/http's acceptance rules (status line, header
// fields including obsolete line folding, which is joined with a space,
// Transfer-Encoding and Content-Length handling, chunk framing and its
// limits); FuzzResponse checks the two agree. The header block is limited
// to 1 MiB, the trailer section to 4 KiB.
package httpstream // import "github.com/otelcol-llm/otelcol-llm/internal/httpstream"
