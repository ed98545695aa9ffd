package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRunRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-faults", "stall"}, "not kind=probability"},
		{[]string{"-faults", "bogus=0.1"}, `unknown fault "bogus"`},
		{[]string{"-jitter", "3"}, "jitter"},
		{[]string{"-output-tokens", "0"}, "output_tokens"},
		{[]string{"-max-running", "-1"}, "max_running"},
		{[]string{"-max-queue", "-1"}, "max_queue"},
		{[]string{"-batch-slowdown", "-0.5"}, "batch_slowdown"},
		{[]string{"-no-such-flag"}, "flag provided but not defined"},
		{[]string{"-addr", "256.0.0.1:99999"}, "listen"},
	} {
		err := run(tc.args, io.Discard)
		require.Error(t, err, tc.args)
		assert.Contains(t, err.Error(), tc.want, tc.args)
	}
}
