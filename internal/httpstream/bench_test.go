package httpstream

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The benchmarks' server runs in a child process (this test binary with
// benchServerEnv set) so that only the client's CPU and memory are
// measured.
const benchServerEnv = "HTTPSTREAM_BENCH_SERVER"

const (
	streamEvents = 256
	benchEvent   = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" token"},"finish_reason":null}]}` + "\n\n"
)

// runBenchServer serves on 127.0.0.1, prints its address and exits when
// stdin closes. POST /stream answers 256 SSE events, one chunk and one
// write each; POST /hold sends the header of a chunked response and then
// holds the connection open.
func runBenchServer(string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	chunk := fmt.Sprintf("%x\r\n%s\r\n", len(benchEvent), benchEvent)
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(1)
		}
		go func() {
			defer c.Close()
			br := bufio.NewReader(c)
			for {
				req, _, err := readRequest(br)
				if err != nil {
					return
				}
				if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"); err != nil {
					return
				}
				if req.URL.Path == "/hold" {
					_, _ = io.Copy(io.Discard, br)
					return
				}
				for range streamEvents {
					if _, err := io.WriteString(c, chunk); err != nil {
						return
					}
				}
				if _, err := io.WriteString(c, "0\r\n\r\n"); err != nil {
					return
				}
			}
		}()
	}
}

// startBenchServer starts the server process and returns its base URL.
func startBenchServer(b *testing.B) string {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), benchServerEnv+"=1")
	stdin, err := cmd.StdinPipe()
	require.NoError(b, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(b, err)
	cmd.Stderr = os.Stderr
	require.NoError(b, cmd.Start())
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(b, err)
	b.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	return "http://" + strings.TrimSpace(addr)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStreamCPU reads a 256-event chunked SSE stream per op and
// reports the client process's CPU per event.
func BenchmarkStreamCPU(b *testing.B) {
	base := startBenchServer(b)
	body := []byte(`{"model":"m","stream":true}`)
	report := func(b *testing.B, cpu time.Duration) {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*streamEvents), "cpu-ns/event")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*streamEvents), "ns/event")
	}
	for _, stamps := range []bool{false, true} {
		b.Run(fmt.Sprintf("httpstream/kernel_timestamps=%v", stamps), func(b *testing.B) {
			cl, err := New(base+"/stream", Options{KernelTimestamps: stamps})
			require.NoError(b, err)
			defer cl.CloseIdle()
			buf := make([]byte, 4096)
			req := &Request{Body: body, Header: []Header{{"Content-Type", "application/json"}}}
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				resp, err := cl.Post(context.Background(), req)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					m, err := resp.Body.Read(buf)
					n += m
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				_ = resp.Body.Close()
				if n != streamEvents*len(benchEvent) {
					b.Fatalf("read %d bytes", n)
				}
			}
			report(b, cpuTime()-cpu0)
		})
	}
	b.Run("net/http", func(b *testing.B) {
		tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 16}
		defer tr.CloseIdleConnections()
		cl := &http.Client{Transport: tr}
		buf := make([]byte, 4096)
		b.ReportAllocs()
		cpu0 := cpuTime()
		for b.Loop() {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, base+"/stream", strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			resp, err := cl.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for {
				m, err := resp.Body.Read(buf)
				n += m
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			_ = resp.Body.Close()
			if n != streamEvents*len(benchEvent) {
				b.Fatalf("read %d bytes", n)
			}
		}
		report(b, cpuTime()-cpu0)
	})
}

// BenchmarkIdleStreams holds 1000 requests open, each blocked in a Read of
// a response the server keeps open, and reports the growth of heap and
// stack in use per waiting stream.
func BenchmarkIdleStreams(b *testing.B) {
	const streams = 1000
	base := startBenchServer(b)
	run := func(b *testing.B, open func(ctx context.Context) (io.ReadCloser, error)) {
		var total, heap, stack float64
		for b.Loop() {
			ctx, cancel := context.WithCancel(context.Background())
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			var ready atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, streams)
			for range streams {
				wg.Add(1)
				go func() {
					defer wg.Done()
					body, err := open(ctx)
					if err != nil {
						errs <- err
						return
					}
					ready.Add(1)
					buf := make([]byte, 512)
					_, _ = body.Read(buf) // blocks until cancel
					_ = body.Close()
				}()
			}
			for i := 0; ready.Load() < streams && i < 3000; i++ {
				select {
				case err := <-errs:
					b.Fatal(err)
				default:
				}
				time.Sleep(10 * time.Millisecond)
			}
			if ready.Load() < streams {
				b.Fatalf("%d of %d streams open", ready.Load(), streams)
			}
			time.Sleep(200 * time.Millisecond) // all block in Read
			runtime.GC()
			runtime.ReadMemStats(&after)
			grow := float64(after.HeapInuse+after.StackInuse) - float64(before.HeapInuse+before.StackInuse)
			total += grow / streams
			heap += (float64(after.HeapInuse) - float64(before.HeapInuse)) / streams
			stack += (float64(after.StackInuse) - float64(before.StackInuse)) / streams
			cancel()
			wg.Wait()
		}
		b.ReportMetric(total/float64(b.N), "bytes/stream")
		b.ReportMetric(heap/float64(b.N), "heap-bytes/stream")
		b.ReportMetric(stack/float64(b.N), "stack-bytes/stream")
	}
	b.Run("httpstream", func(b *testing.B) {
		cl, err := New(base+"/hold", Options{KernelTimestamps: true, MaxIdle: -1})
		require.NoError(b, err)
		run(b, func(ctx context.Context) (io.ReadCloser, error) {
			resp, err := cl.Post(ctx, &Request{Body: []byte(`{}`)})
			if err != nil {
				return nil, err
			}
			return resp.Body, nil
		})
	})
	b.Run("net/http", func(b *testing.B) {
		tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: streams}
		defer tr.CloseIdleConnections()
		cl := &http.Client{Transport: tr}
		run(b, func(ctx context.Context) (io.ReadCloser, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/hold", strings.NewReader(`{}`))
			resp, err := cl.Do(req)
			if err != nil {
				return nil, err
			}
			return resp.Body, nil
		})
	})
}
