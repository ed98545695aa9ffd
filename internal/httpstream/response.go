package httpstream

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

const (
	// maxHeaderBytes bounds one response's status line and header block.
	maxHeaderBytes = 1 << 20
	// max1xx is how many informational responses are skipped before the
	// final one, as net/http's Transport allows.
	max1xx = 5
)

// ErrProtocol is wrapped by every error about a malformed response: status
// line, header, transfer coding, chunk framing or a header block over
// 1 MiB.
var ErrProtocol = errors.New("httpstream: protocol error")

func protoErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrProtocol}, args...)...)
}

// Response is the status and header of a response; its body streams from
// Body, which must be closed.
type Response struct {
	StatusCode int
	// Proto is the version of the status line, e.g. "HTTP/1.1".
	Proto string
	// Header holds the header fields as received, keys canonical
	// (Transfer-Encoding and Content-Length included).
	Header http.Header
	Body   *Body
}

// readResponse reads status lines and headers, skipping 1xx responses other
// than 101, and returns the final response with its body set up. The
// acceptance rules follow net/http's ReadResponse and Transport so that
// both read the same bytes the same way.
func readResponse(c *conn) (*Response, error) {
	for n1xx := 0; ; n1xx++ {
		resp, err := readHead(c)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 100 && resp.StatusCode <= 199 && resp.StatusCode != 101 {
			// Informational: no body, the final response follows. Its
			// Transfer-Encoding is still checked, as net/http does.
			if _, err := transferOf(resp); err != nil {
				return nil, err
			}
			if n1xx == max1xx {
				return nil, protoErr("more than %d 1xx responses", max1xx)
			}
			continue
		}
		b, err := transferOf(resp)
		if err != nil {
			return nil, err
		}
		b.c = c
		resp.Body = b
		return resp, nil
	}
}

// readHead reads one status line and header block.
func readHead(c *conn) (*Response, error) {
	bud := budget{left: maxHeaderBytes, what: "response header block", max: maxHeaderBytes}
	line, _, err := headLine(c, &bud)
	if err != nil {
		return nil, err
	}
	resp := &Response{}
	proto, status, ok := bytes.Cut(line, []byte(" "))
	if !ok {
		return nil, protoErr("malformed status line %q", line)
	}
	status = bytes.TrimLeft(status, " ")
	code, _, _ := bytes.Cut(status, []byte(" "))
	if len(code) != 3 {
		return nil, protoErr("malformed status code %q in status line %q", code, line)
	}
	resp.StatusCode, err = strconv.Atoi(string(code))
	if err != nil || resp.StatusCode < 0 {
		return nil, protoErr("malformed status code %q in status line %q", code, line)
	}
	resp.Proto = string(proto)
	if _, _, ok := http.ParseHTTPVersion(resp.Proto); !ok {
		return nil, protoErr("malformed HTTP version %q in status line %q", proto, line)
	}
	resp.Header, _, err = readHeader(c, &bud)
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// budget is what is left of a header block's size limit.
type budget struct {
	left int
	what string // for the error
	max  int
}

// headLine reads one line of a header block, charging it to budget.
func headLine(c *conn, bud *budget) ([]byte, bool, error) {
	line, n, crlf, err := c.readLine(bud.left)
	if err != nil {
		if errors.Is(err, errBufferFull) {
			return nil, false, protoErr("%s exceeds %d bytes", bud.what, bud.max)
		}
		return nil, false, err
	}
	bud.left -= n
	return line, crlf, nil
}

// readHeader reads header lines up to and including the empty line, with
// the rules of net/textproto's ReadMIMEHeader: obsolete line folding is
// joined with single spaces, keys are canonicalized unless they hold a
// space, values are trimmed of surrounding spaces and tabs and may not hold
// control bytes other than tab. crlfEnd reports whether the block ended in
// "\r\n\r\n".
func readHeader(c *conn, bud *budget) (h http.Header, crlfEnd bool, err error) {
	h = make(http.Header)
	if b, err := c.peekByte(); err == nil && (b == ' ' || b == '\t') {
		line, _, err := headLine(c, bud)
		if err != nil {
			return nil, false, err
		}
		return nil, false, protoErr("malformed header: first line starts with white space: %q", line)
	}
	var scratch []byte
	prevCRLF := false
	for {
		line, crlf, err := headLine(c, bud)
		if err != nil {
			return nil, false, err
		}
		if len(line) == 0 {
			return h, prevCRLF && crlf, nil
		}
		if bytes.IndexByte(line, ':') < 0 {
			return nil, false, protoErr("malformed header line, missing colon: %q", line)
		}
		var kv []byte
		kv, scratch, crlf, err = unfold(c, bud, trimOWS(line), scratch, crlf)
		if err != nil {
			return nil, false, err
		}
		prevCRLF = crlf
		if err := addField(h, kv); err != nil {
			return nil, false, err
		}
	}
}

// unfold joins to the field kv the obsolete folded continuation lines that
// follow it (RFC 9112 section 5.2), each with one space, in scratch; crlf is
// whether the field's last line ended in CRLF.
func unfold(c *conn, bud *budget, kv, scratch []byte, crlf bool) ([]byte, []byte, bool, error) {
	inScratch := false
	for {
		if !inScratch && c.r == c.w {
			// The peek below may refill the buffer under kv.
			scratch = append(scratch[:0], kv...)
			kv, inScratch = scratch, true
		}
		b, err := c.peekByte()
		if err != nil || (b != ' ' && b != '\t') {
			return kv, scratch, crlf, nil
		}
		if !inScratch {
			scratch = append(scratch[:0], kv...)
			kv, inScratch = scratch, true
		}
		for {
			for c.r < c.w && (c.buf[c.r] == ' ' || c.buf[c.r] == '\t') {
				c.r++
				bud.left--
			}
			if c.r < c.w || c.fill(len(c.buf)) != nil {
				break // headLine reports a read error
			}
		}
		cont, ccrlf, err := headLine(c, bud)
		if err != nil {
			return nil, nil, false, err
		}
		crlf = ccrlf
		scratch = append(scratch, ' ')
		scratch = append(scratch, trimOWS(cont)...)
		kv = scratch
	}
}

// addField adds the header line kv ("key: value") to h, checking the key
// and the value's bytes.
func addField(h http.Header, kv []byte) error {
	k, v, _ := bytes.Cut(kv, []byte(":"))
	key, ok := canonicalKey(k)
	if !ok {
		return protoErr("malformed header line %q", kv)
	}
	for _, b := range v {
		if !validValueByte(b) {
			return protoErr("malformed header line %q", kv)
		}
	}
	h[key] = append(h[key], string(bytes.TrimLeft(v, " \t")))
	return nil
}

// trimOWS removes leading and trailing spaces and tabs.
func trimOWS(b []byte) []byte {
	return bytes.Trim(b, " \t")
}

// validValueByte: VCHAR, obs-text, SP and HTAB.
func validValueByte(b byte) bool {
	return b == '\t' || b >= 0x20 && b != 0x7f
}

// tokenByte reports whether b may appear in a header field name.
func tokenByte(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}

// canonicalKey canonicalizes a header name in place and returns it as a
// string; a name with a space is kept as is (net/textproto accepts those),
// any other non-token byte is an error.
func canonicalKey(k []byte) (string, bool) {
	if len(k) == 0 {
		return "", false
	}
	space := false
	for _, b := range k {
		if b == ' ' {
			space = true
		} else if !tokenByte(b) {
			return "", false
		}
	}
	if space {
		return string(k), true
	}
	upper := true
	for i, b := range k {
		if upper && 'a' <= b && b <= 'z' {
			b -= 'a' - 'A'
		} else if !upper && 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		k[i] = b
		upper = b == '-'
	}
	switch string(k) {
	case "Content-Type":
		return "Content-Type", true
	case "Content-Length":
		return "Content-Length", true
	case "Transfer-Encoding":
		return "Transfer-Encoding", true
	case "Connection":
		return "Connection", true
	case "Date":
		return "Date", true
	case "Cache-Control":
		return "Cache-Control", true
	case "Server":
		return "Server", true
	case "X-Accel-Buffering":
		return "X-Accel-Buffering", true
	}
	return string(k), true
}

// Body framing.
const (
	bodyNone = iota
	bodyLength
	bodyChunked
	bodyUntilClose
)

// transferOf decides the framing of resp's body and whether the connection
// may be kept, following net/http's readTransfer for a response to a
// request that is not HEAD.
func transferOf(resp *Response) (*Body, error) {
	h := resp.Header
	major, minor, _ := http.ParseHTTPVersion(resp.Proto)
	b := &Body{keepAlive: !shouldClose(major, minor, h)}
	if major == 0 && minor == 0 {
		major, minor = 1, 1
	}
	chunked, err := isChunked(h, major, minor)
	if err != nil {
		return nil, err
	}
	length, err := contentLength(h["Content-Length"])
	if err != nil {
		return nil, err
	}
	code := resp.StatusCode
	bodyAllowed := !(code >= 100 && code <= 199 || code == 204 || code == 304)
	if !bodyAllowed {
		length = 0
	} else if chunked {
		length = -1
	}
	if chunked {
		if err := checkTrailerHeader(h["Trailer"]); err != nil {
			return nil, err
		}
	}
	switch {
	case chunked && bodyAllowed:
		b.mode = bodyChunked
	case chunked || length == 0:
		b.mode = bodyNone
	case length > 0:
		b.mode = bodyLength
		b.remain = length
	default:
		// No length: the body runs until the server closes.
		b.mode = bodyUntilClose
		b.keepAlive = false
	}
	if code == 101 {
		b.keepAlive = false
	}
	return b, nil
}

// isChunked tells whether Transfer-Encoding makes the body chunked (HTTP/1.1
// and later); any other coding is an error.
func isChunked(h http.Header, major, minor int) (bool, error) {
	te, ok := h["Transfer-Encoding"]
	if !ok || !(major > 1 || major == 1 && minor >= 1) {
		return false, nil
	}
	if len(te) != 1 {
		return false, protoErr("too many transfer encodings: %q", te)
	}
	if !strings.EqualFold(te[0], "chunked") {
		return false, protoErr("unsupported transfer encoding %q", te[0])
	}
	return true, nil
}

// contentLength parses the Content-Length values cl (several only when
// equal); -1 when there is none.
func contentLength(cl []string) (int64, error) {
	if len(cl) == 0 {
		return -1, nil
	}
	first := trimSpace(cl[0])
	for _, v := range cl[1:] {
		if trimSpace(v) != first {
			return 0, protoErr("multiple Content-Length headers %q", cl)
		}
	}
	if first == "" {
		return 0, protoErr("empty Content-Length")
	}
	n, err := strconv.ParseUint(first, 10, 63)
	if err != nil {
		return 0, protoErr("bad Content-Length %q", first)
	}
	return int64(n), nil
}

// shouldClose is net/http's rule: HTTP/1.0 closes unless "Connection:
// keep-alive", later versions close on "Connection: close".
func shouldClose(major, minor int, h http.Header) bool {
	if major < 1 {
		return true
	}
	conv := h["Connection"]
	hasClose := hasToken(conv, "close")
	if major == 1 && minor == 0 {
		return hasClose || !hasToken(conv, "keep-alive")
	}
	return hasClose
}

func hasToken(values []string, token string) bool {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.Trim(part, " \t"), token) {
				return true
			}
		}
	}
	return false
}

// checkTrailerHeader rejects trailer declarations net/http rejects.
func checkTrailerHeader(vv []string) error {
	for _, v := range vv {
		for part := range strings.SplitSeq(v, ",") {
			part = strings.Trim(part, " \t")
			if part == "" {
				continue
			}
			switch http.CanonicalHeaderKey(part) {
			case "Transfer-Encoding", "Trailer", "Content-Length":
				return protoErr("bad trailer key %q", part)
			}
		}
	}
	return nil
}

// trimSpace trims ASCII space, tab, CR and LF as net/textproto.TrimString.
func trimSpace(s string) string {
	return strings.Trim(s, " \t\r\n")
}
