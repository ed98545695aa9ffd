package sharedcomponent

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var (
	errStart = errors.New("start failed")
	errStop  = errors.New("shutdown failed")
)

// fake counts the lifecycle calls that reach the shared instance.
type fake struct {
	starts, stops atomic.Int32
	startErr      error
	stopErr       error
	host          component.Host
}

func (f *fake) Start(_ context.Context, host component.Host) error {
	f.starts.Add(1)
	f.host = host
	return f.startErr
}

func (f *fake) Shutdown(context.Context) error {
	f.stops.Add(1)
	return f.stopErr
}

// op is one lifecycle call on reference ref (0 is the Component LoadOrStore
// returns, 1 and up come from NewRef) and what must hold after it.
type op struct {
	ref     int
	start   bool // Start, else Shutdown
	wantErr error
	starts  int32 // instance Starts so far
	stops   int32 // instance Shutdowns so far
	inMap   bool  // the key still has its entry
}

func start(ref int, starts, stops int32, inMap bool) op {
	return op{ref: ref, start: true, starts: starts, stops: stops, inMap: inMap}
}

func stop(ref int, starts, stops int32, inMap bool) op {
	return op{ref: ref, starts: starts, stops: stops, inMap: inMap}
}

func failing(o op, err error) op {
	o.wantErr = err
	return o
}

func TestLifecycle(t *testing.T) {
	tests := []struct {
		name     string
		refs     int // references made with NewRef
		startErr error
		stopErr  error
		ops      []op
	}{
		{name: "shutdown without start", ops: []op{stop(0, 0, 0, false), stop(0, 0, 0, false)}},
		{name: "start twice", ops: []op{start(0, 1, 0, true), start(0, 1, 0, true), stop(0, 1, 1, false)}},
		{name: "shutdown twice", ops: []op{start(0, 1, 0, true), stop(0, 1, 1, false), stop(0, 1, 1, false)}},
		{name: "start after shutdown", ops: []op{start(0, 1, 0, true), stop(0, 1, 1, false), start(0, 1, 1, false)}},
		{name: "start error is kept", refs: 1, startErr: errStart, ops: []op{
			failing(start(0, 1, 0, true), errStart), failing(start(0, 1, 0, true), errStart),
			failing(start(1, 1, 0, true), errStart), stop(0, 1, 0, false), stop(1, 1, 0, false),
		}},
		{name: "shutdown error returned once", stopErr: errStop, ops: []op{
			start(0, 1, 0, true), failing(stop(0, 1, 1, false), errStop), stop(0, 1, 1, false),
		}},
		{name: "shared reference stops with the first shutdown", ops: []op{
			start(0, 1, 0, true), start(0, 1, 0, true), stop(0, 1, 1, false), stop(0, 1, 1, false),
		}},
		{name: "own references stop with the last shutdown", refs: 2, ops: []op{
			start(1, 1, 0, true), start(2, 1, 0, true), stop(1, 1, 0, true), stop(1, 1, 0, true), stop(2, 1, 1, false),
		}},
		{name: "idle reference does not hold the instance", refs: 2, ops: []op{
			start(1, 1, 0, true), stop(2, 1, 0, true), stop(1, 1, 1, false),
		}},
		{name: "stopped instance does not start again", refs: 2, ops: []op{
			start(1, 1, 0, true), stop(1, 1, 1, false), start(2, 1, 1, false), stop(2, 1, 1, false),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMap[string, *fake]()
			f := &fake{startErr: tt.startErr, stopErr: tt.stopErr}
			c, err := m.LoadOrStore("k", func() (*fake, error) { return f, nil })
			require.NoError(t, err)
			refs := []*Component[*fake]{c}
			for range tt.refs {
				refs = append(refs, c.NewRef())
			}
			for i, o := range tt.ops {
				r := refs[o.ref]
				if o.start {
					err = r.Start(context.Background(), componenttest.NewNopHost())
				} else {
					err = r.Shutdown(context.Background())
				}
				require.ErrorIs(t, err, o.wantErr, "op %d", i)
				if o.wantErr == nil {
					require.NoError(t, err, "op %d", i)
				}
				assert.Equal(t, o.starts, f.starts.Load(), "op %d: instance starts", i)
				assert.Equal(t, o.stops, f.stops.Load(), "op %d: instance shutdowns", i)
				assert.Equal(t, o.inMap, m.Len() == 1, "op %d: entry in the map", i)
			}
		})
	}
}

func TestLoadOrStore(t *testing.T) {
	m := NewMap[string, *fake]()
	creates := 0
	create := func() (*fake, error) { creates++; return &fake{}, nil }

	a, err := m.LoadOrStore("a", create)
	require.NoError(t, err)
	a2, err := m.LoadOrStore("a", create)
	require.NoError(t, err)
	require.Same(t, a, a2, "one Component per key")
	b, err := m.LoadOrStore("b", create)
	require.NoError(t, err)
	require.NotSame(t, a.Unwrap(), b.Unwrap(), "one instance per key")
	assert.Same(t, a.Unwrap(), a.NewRef().Unwrap(), "a reference shares the instance")
	assert.Equal(t, 2, creates)
	assert.Equal(t, 2, m.Len())

	require.NoError(t, a.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, a.Shutdown(context.Background()))
	assert.Equal(t, 1, m.Len(), "a stopped instance leaves the map")
	a3, err := m.LoadOrStore("a", create)
	require.NoError(t, err)
	assert.NotSame(t, a.Unwrap(), a3.Unwrap(), "the key gets a fresh instance")
	require.NoError(t, a3.Shutdown(context.Background()))
	require.NoError(t, b.Shutdown(context.Background()))
	assert.Zero(t, m.Len())
}

func TestLoadOrStoreCreateError(t *testing.T) {
	m := NewMap[string, *fake]()
	errCreate := errors.New("bad config")
	c, err := m.LoadOrStore("k", func() (*fake, error) { return nil, errCreate })
	require.ErrorIs(t, err, errCreate)
	assert.Nil(t, c)
	assert.Zero(t, m.Len(), "a failed create stores nothing")
	c, err = m.LoadOrStore("k", func() (*fake, error) { return &fake{}, nil })
	require.NoError(t, err)
	require.NotNil(t, c.Unwrap(), "the next LoadOrStore creates again")
}

func TestFirstStartHost(t *testing.T) {
	m := NewMap[string, *fake]()
	c, err := m.LoadOrStore("k", func() (*fake, error) { return &fake{}, nil })
	require.NoError(t, err)
	first, second := componenttest.NewNopHost(), &otherHost{}
	require.NoError(t, c.Start(context.Background(), first))
	r := c.NewRef()
	require.NoError(t, r.Start(context.Background(), second))
	assert.Same(t, first, c.Unwrap().host)
	require.NoError(t, c.Shutdown(context.Background()))
	require.NoError(t, r.Shutdown(context.Background()))
}

type otherHost struct{ component.Host }

// TestConcurrent gets, starts and shuts down one key from many goroutines:
// one instance, started once, shut down once, removed (run with -race).
func TestConcurrent(t *testing.T) {
	const n = 32
	m := NewMap[string, *fake]()
	var creates atomic.Int32
	create := func() (*fake, error) { creates.Add(1); return &fake{}, nil }
	got := make([]*Component[*fake], n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c, err := m.LoadOrStore("k", create)
			assert.NoError(t, err)
			got[i] = c
		})
	}
	wg.Wait()
	require.Equal(t, int32(1), creates.Load())
	for _, c := range got {
		require.Same(t, got[0], c)
	}

	refs := make([]*Component[*fake], n)
	for i := range refs {
		refs[i] = got[0].NewRef()
	}
	runAll(refs, func(c *Component[*fake]) {
		assert.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	})
	runAll(refs, func(c *Component[*fake]) { assert.NoError(t, c.Shutdown(context.Background())) })
	f := got[0].Unwrap()
	assert.Equal(t, int32(1), f.starts.Load())
	assert.Equal(t, int32(1), f.stops.Load())
	assert.Zero(t, m.Len())
}

// runAll calls fn on every reference at once, twice each.
func runAll(refs []*Component[*fake], fn func(*Component[*fake])) {
	var wg sync.WaitGroup
	for _, c := range refs {
		for range 2 {
			wg.Go(func() { fn(c) })
		}
	}
	wg.Wait()
}
