package inferencelogreceiver

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The tests write whole files before the receiver reads them, so the
	// last record of a file need not wait stanza's 5 s for continuations.
	foldFlush = 500 * time.Millisecond
	goleak.VerifyTestMain(m)
}
