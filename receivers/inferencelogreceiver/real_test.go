package inferencelogreceiver

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/plog"
)

// realFloor is, per server, the share of records of the real excerpts in
// testdata/real/<server>/ that the preset parses (no parse error); the test
// fails below it, so a change can only raise it. README.md gives the
// numbers.
var realFloor = map[string]float64{
	"vllm":     0.963,
	"tgi":      0.991,
	"sglang":   0.979,
	"ollama":   0.976,
	"llamacpp": 0.990,
}

// laterExcerpts are, per server, the first and last number of the files
// of each later collection (the second, the third, the fourth and the
// fifth):
// excerpts from sources the presets had not been tuned on when they were
// added. The test
// logs each one's parsed share on its own (README.md gives it before and
// after the presets learnt from them).
var laterExcerpts = map[string][][2]int{
	"vllm": {{23, 44}, {50, 57}, {58, 66}, {67, 75}, {76, 83}, {84, 90}, {91, 97}}, "sglang": {{17, 29}, {30, 35}, {36, 42}, {43, 48}, {49, 54}, {55, 60}},
	"tgi":    {{19, 24}, {25, 34}, {35, 41}, {42, 46}, {47, 51}, {52, 56}},
	"ollama": {{16, 25}, {26, 34}, {35, 46}, {47, 56}, {57, 63}, {64, 70}, {71, 77}}, "llamacpp": {{19, 27}, {28, 34}, {35, 41}, {42, 50}, {51, 56}, {57, 63}, {64, 70}},
}

// collectionNames name each preset's later collections in order.
var collectionNames = map[string][]string{
	"vllm": {"second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"}, "sglang": {"second", "fourth", "fifth", "sixth", "seventh", "eighth"},
	"tgi":    {"second", "fourth", "fifth", "sixth", "seventh", "eighth"},
	"ollama": {"second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"}, "llamacpp": {"second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"},
}

// collection is the later collection (1 for the first of laterExcerpts,
// 2 for the next, ...) the record's file belongs to, or 0.
func collection(preset string, lr plog.LogRecord) int {
	name, _ := lr.Attributes().Get(attrFileName)
	num, _, _ := strings.Cut(name.Str(), "-")
	n, err := strconv.Atoi(num)
	if err != nil {
		return 0
	}
	for k, r := range laterExcerpts[preset] {
		if n >= r[0] && n <= r[1] {
			return k + 1
		}
	}
	return 0
}

// TestRealSamples runs every preset over the verbatim excerpts of real
// server output in testdata/real/<server>/ (each listed with its source in
// the folder's SOURCES.md): every line comes out exactly once (continuation
// lines folded into their record), and the parsed share stays at or above
// the preset's floor.
func TestRealSamples(t *testing.T) {
	for _, name := range presetNames {
		t.Run(name, func(t *testing.T) {
			dir := testdataPath("real", name)
			files, err := filepath.Glob(filepath.Join(dir, "*.log"))
			require.NoError(t, err)
			require.NotEmpty(t, files, "no real samples for %s", name)
			sources, err := os.ReadFile(filepath.Join(dir, "SOURCES.md"))
			require.NoError(t, err, "every folder of real samples names its sources")
			want, lines := 0, 0
			for _, f := range files {
				assert.Contains(t, string(sources), filepath.Base(f), "SOURCES.md lists %s", filepath.Base(f))
				want += expectedRecords(t, name, f)
				lines += countLines(t, f)
			}
			s := startReceiver(t, testConfig(name, filepath.Join(dir, "*.log")), componenttest.NewNopHost())
			s.waitRecords(t, want)
			s.stop(t)
			require.Equal(t, want, s.logs.LogRecordCount(), "every line once (continuation lines folded), none dropped")

			parsed, reasons, examples := 0, map[string]int{}, []string{}
			p, err := loadPreset(name, presetParams{Location: "UTC"})
			require.NoError(t, err)
			stats, fed := 0, 0
			later, laterParsed := make([]int, len(laterExcerpts[name])), make([]int, len(laterExcerpts[name]))
			for _, lr := range allRecords(s.logs) {
				_, bad := lr.Attributes().Get(attrParseError)
				if c := collection(name, lr); c > 0 {
					later[c-1]++
					if !bad {
						laterParsed[c-1]++
					}
				}
				if isStatsRecord(name, lr) {
					stats++
					if feedsMetrics(p, lr) {
						fed++
					} else {
						t.Logf("  stats line without metrics: %q", truncate(lr.Body().Str(), 160))
					}
				}
				if v, bad := lr.Attributes().Get(attrParseError); bad {
					reasons[v.Str()]++
					if len(examples) < 12 {
						examples = append(examples, truncate(lr.Body().Str(), 160))
					}
				} else {
					parsed++
				}
			}
			share := float64(parsed) / float64(want)
			t.Logf("%s: %d files, %d lines, %d records, %d parsed (%.1f %%), %d stats and request lines, %d feeding metrics, %d metric points; unparsed by reason: %v",
				name, len(files), lines, want, parsed, 100*share, stats, fed, s.metrics.DataPointCount(), reasons)
			for k, r := range laterExcerpts[name] {
				t.Logf("%s: the %s collection (files %d-%d): %d records, %d parsed (%.1f %%)",
					name, collectionNames[name][k], r[0], r[1], later[k], laterParsed[k], 100*float64(laterParsed[k])/float64(max(later[k], 1)))
			}
			assert.Equal(t, stats, fed, "every stats and request line feeds its metrics")
			for _, e := range examples {
				t.Logf("  unparsed: %q", e)
			}
			assert.GreaterOrEqual(t, share, realFloor[name], "parsed share of %s's real samples fell below its floor", name)
		})
	}
}

// statsEvents are the records that carry engine state or request timings,
// by preset.
var statsEvents = map[string][]string{
	"vllm":     {"vllm.stats"},
	"sglang":   {"sglang.stats"},
	"llamacpp": {"llamacpp.timing"},
	"tgi":      {"tgi.request"},
	"ollama":   {"http.access"},
}

func isStatsRecord(preset string, lr plog.LogRecord) bool {
	ev, ok := lr.Attributes().Get(attrEventName)
	return ok && slices.Contains(statsEvents[preset], ev.Str())
}

// feedsMetrics reports whether the record parsed and holds at least one of
// the preset's metric attributes.
func feedsMetrics(p *preset, lr plog.LogRecord) bool {
	if _, bad := lr.Attributes().Get(attrParseError); bad {
		return false
	}
	for _, f := range p.metrics {
		if _, ok := lr.Attributes().Get(f.Attribute); ok {
			return true
		}
	}
	return false
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// TestRealSpotChecks checks what the presets make of particular real lines:
// not only that they parse, but into which body and attributes.
func TestRealSpotChecks(t *testing.T) {
	for _, tc := range []struct {
		preset, file, body string // body: the record's body starts with it
		severity           plog.SeverityNumber
		attrs              map[string]any
		bodyHas            string
	}{
		// A JSON record that the terminal copy hard-wrapped at 204 columns, joined back.
		{"tgi", "01-tgi1.2-json-output-openshift-wrapped.log", "Args { model_id: ", plog.SeverityNumberInfo,
			map[string]any{"tgi.target": "text_generation_launcher"}, "quantize: Some(Bitsandbytes), dtype: None"},
		{"tgi", "01-tgi1.2-json-output-openshift-wrapped.log", "Starting shard", plog.SeverityNumberInfo,
			map[string]any{"tgi.span.name": "shard-manager"}, ""},
		{"vllm", "15-v0.11.0rc2-docker-compose-vllm-1-prefix-rocm-startup.log", "Rank 0 is connected to 0 peer ranks", plog.SeverityNumberUnspecified,
			map[string]any{"inference_log.library": "gloo", attrContainerName: "vllm-1"}, ""},
		{"vllm", "22-v0.28.0-enginecore-startup-failure-rank0-apiserver-traceback.log", "Warning: WARNING: destroy_process_group()", plog.SeverityNumberWarn,
			map[string]any{"code.file.path": "ProcessGroupNCCL.cpp", "code.line.number": int64(1624), attrRank: int64(0)}, ""},
		{"vllm", "04-v0.3-xinference-wrapped-engine-init.log", "Launching qwen1.5-chat-1-0 with VLLMChatModel", plog.SeverityNumberDebug,
			map[string]any{"code.namespace": "xinference.model.llm.core", "process.pid": int64(3456676)}, ""},
		{"vllm", "08-v0.8-kserve-logger-wrapped-v0-engine.log", "Received request chatcmpl-017ee87d69ed40e9b67198e5c5e0ee7d", plog.SeverityNumberUnspecified,
			map[string]any{"code.namespace": "kserve.trace", "process.pid": int64(1647689)}, ""},
		{"vllm", "16-v0.11-html-font-color-apiserver-prefix.log", "Starting vLLM API server 0 on http://0.0.0.0:8000", plog.SeverityNumberInfo,
			map[string]any{"code.file.path": "api_server.py", attrProcessTitle: "APIServer"}, ""},
		{"vllm", "07-v0.7.1-djl-sagemaker-cloudwatch-hash033-ansi.log", "BOTH API bind to: http://0.0.0.0:8080", plog.SeverityNumberInfo,
			map[string]any{"code.namespace": "ModelServer"}, ""},
		// A PyTorch C++ error's advice and frames folded into the glog record.
		{"vllm", "45-v0.6.4-rank0-nccl-watchdog-cuda-error-advice-frames.log", "[PG ID 2 PG GUID 3 Rank 0] Process group watchdog", plog.SeverityNumberError,
			map[string]any{"code.file.path": "ProcessGroupNCCL.cpp", attrRank: int64(0)}, "frame #1: c10::detail::torchCheckFail"},
		{"vllm", "47-v1-vllmworker-tp0-prefix-worker-traceback.log", "  File \"/home/zjy/code/vllm-src/vllm/v1/worker/gpu_worker.py\"", plog.SeverityNumberError,
			map[string]any{attrProcessTitle: "VllmWorker", attrProcessPID: int64(1035573), "code.file.path": "multiproc_executor.py"}, ""},
		{"vllm", "48-v1-buildkite-bracketed-time-worker-tp0-traceback.log", "    with torch.cuda.graph", plog.SeverityNumberError,
			map[string]any{attrWrapperTime: "2025-12-13T19:54:35Z", attrProcessTitle: "Worker_TP0"}, ""},
		{"vllm", "49-v0.5.3-nccl-warn-info-with-source-file.log", "Cuda failure 1 'invalid argument'", plog.SeverityNumberWarn,
			map[string]any{"inference_log.library": "nccl", "process.pid": int64(2343)}, ""},
		// A pretty-printed config dump folded into the engine's record.
		{"vllm", "07-v0.7.1-djl-sagemaker-cloudwatch-hash033-ansi.log", "Initializing a V0 LLM engine (v0.7.1)", plog.SeverityNumberInfo,
			nil, "\"max_capture_size\": 2\n}\n, use_cached_outputs=False,"},
	} {
		t.Run(tc.preset+"/"+tc.body, func(t *testing.T) {
			path := testdataPath("real", tc.preset, tc.file)
			s := startReceiver(t, testConfig(tc.preset, path), componenttest.NewNopHost())
			s.waitRecords(t, expectedRecords(t, tc.preset, path))
			s.stop(t)
			var found bool
			for _, lr := range allRecords(s.logs) {
				if !strings.HasPrefix(lr.Body().Str(), tc.body) {
					continue
				}
				found = true
				_, bad := lr.Attributes().Get(attrParseError)
				assert.False(t, bad, "parsed")
				assert.Equal(t, tc.severity, lr.SeverityNumber(), "severity")
				for k, want := range tc.attrs {
					got, ok := lr.Attributes().Get(k)
					if assert.True(t, ok, "attribute %s", k) {
						assert.Equal(t, want, got.AsRaw(), "attribute %s", k)
					}
				}
				assert.Contains(t, lr.Body().Str(), tc.bodyHas)
				break
			}
			assert.True(t, found, "a record whose body starts with %q", tc.body)
		})
	}
}

// TestBareStatsLine: a stats message printed without vLLM's header still
// gives its metrics.
func TestBareStatsLine(t *testing.T) {
	pp := buildPresetPipeline(t, "vllm")
	e := pp.parse(t, "Engine 001: Avg prompt throughput: 10.5 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 3 reqs, Waiting: 1 reqs, GPU KV cache usage: 12.5%, Prefix cache hit rate: 40.0%")
	assert.NotContains(t, e.Attributes, attrParseError)
	assert.Equal(t, "vllm.stats", e.Attributes[attrEventName])
	assert.Equal(t, int64(3), e.Attributes["vllm.num_requests_running"])
	assert.Equal(t, 0.125, e.Attributes["vllm.gpu_cache_usage_perc"])
	assert.Equal(t, int64(1), e.Attributes["vllm.engine"])
}

// The kinds of line the third collection showed the presets, each as a
// rule: libraries' bracket-tagged lines in a vLLM process, a V1 stats line a
// terminal cut short (its fields before the cut, and nothing else that
// fails the full pattern), a Go fatal signal's register dump folded into
// Ollama's crash record, and llama.cpp's multi-line chat template example.
func TestThirdCollectionRules(t *testing.T) {
	vllm := buildPresetPipeline(t, "vllm")
	e := vllm.parse(t, "[transformers] The `use_fast` parameter is deprecated and will be removed in a future version.")
	assert.NotContains(t, e.Attributes, attrParseError)
	assert.Equal(t, "transformers", e.Attributes["code.namespace"])
	e = vllm.parse(t, "[ERROR] `min_frames` is part of Qwen3VLVideoProcessorInitKwargs, but not documented.")
	assert.NotContains(t, e.Attributes, attrParseError)
	assert.Equal(t, "ERROR", e.SeverityText)

	e = vllm.parse(t, "Engine 000: Avg prompt throughput: 1386.0 tokens/s, Avg generation throug")
	assert.NotContains(t, e.Attributes, attrParseError)
	assert.InDelta(t, 1386.0, e.Attributes["vllm.avg_prompt_throughput_toks_per_s"], 1e-9)
	assert.Equal(t, "Avg generation throug", e.Attributes["inference_log.truncated_at"])
	assert.NotContains(t, e.Attributes, "vllm.avg_generation_throughput_toks_per_s")
	e = vllm.parse(t, "Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 3 reqs, Waiting: 0 reqs, GPU KV cache usage: 5.0%, Prefix cache hit rate: 1.0%")
	assert.NotContains(t, e.Attributes, "inference_log.truncated_at", "a whole line is not a cut one")
	for _, bad := range []string{
		"Engine 000: Avg prompt throughput: 1.0 tokens/s, Running: x reqs, Waiting: 0 reqs",
		"Engine 000: Avg prompt throughput: 1.0 tokens/s, avg generation 5",
	} {
		assert.Contains(t, vllm.parse(t, bad).Attributes, attrParseError, "%q is not a cut line", bad)
	}

	ollama, err := loadPreset("ollama", presetParams{Location: "UTC"})
	require.NoError(t, err)
	for _, l := range []string{"rax    0x73a0876cb000", "r15    0x73a1f28ea420", "rflags 0x10206", "gs     0x0"} {
		assert.True(t, ollama.continues(l), "%q", l)
	}
	assert.False(t, ollama.continues(`time=2025-02-19T03:05:23.579+08:00 level=ERROR source=sched.go:455 msg="x"`))
	assert.False(t, ollama.continues("rax is not a register line 0x1"))

	llama, err := loadPreset("llamacpp", presetParams{Location: "UTC"})
	require.NoError(t, err)
	for _, l := range []string{"<|im_start|>user", "You are a helpful assistant<|im_end|>", "How are you?<|im_end|>", "<think>", "'"} {
		assert.True(t, llama.continues(l), "%q", l)
	}
	for _, l := range []string{"0.13.678.519 I srv  init: the prompt ends <|im_end|>", "slot launch_slot_: id  0 | task 1 | prompt <|im_end|>", "srv  log_server_r: request: POST /completion 127.0.0.1 200"} {
		assert.False(t, llama.continues(l), "%q", l)
	}
	checkFourthCollectionRules(t, ollama, llama)
	checkFifthCollectionRules(t, ollama, llama)
	checkSixthCollectionRules(t)
	checkSeventhCollectionRules(t, llama)
	checkEighthCollectionRules(t)
}

// checkFourthCollectionRules: the rules the fourth collection taught. The
// gdb session ggml runs on an abort folds into the abort's record, which
// is parsed (file, line, event) in both presets that print it; Go frames of
// newer runtimes fold; llama.cpp's device list folds; journalctl's own
// lines are collection records.
func checkFourthCollectionRules(t *testing.T, ollama, llama *preset) {
	gdb := []string{"[New LWP 27301]", "[Thread debugging using libthread_db enabled]", `Using host libthread_db library "/lib64/libthread_db.so.1".`,
		"0x00007fad83e2ee13 in wait4 () from /lib64/libc.so.6", "#0  0x00007fad83e2ee13 in wait4 () from /lib64/libc.so.6",
		"#2  0x00007fad85c36a52 in ggml_cuda_error(char const*, int) () from /usr/local/lib/ollama/libggml_cuda_v11.so",
		"30\t../sysdeps/unix/sysv/linux/waitpid.c: No such file or directory.", "[Inferior 1 (process 27300) detached]", "Debuginfod has been disabled."}
	for _, l := range gdb {
		assert.True(t, ollama.continues(l), "ollama: %q", l)
		assert.True(t, llama.continues(l), "llamacpp: %q", l)
	}
	for _, l := range []string{"goroutine 35 gp=0xc0005041c0 m=nil [GC worker (idle)]:", "runtime.gopark(0xc718f1d7439?, 0x0?, 0x0?)", "runtime.goexit({})", "runtime.gcBgMarkStartWorkers.gowrap1()"} {
		assert.True(t, ollama.continues(l), "%q", l)
	}
	assert.False(t, ollama.continues("time=2025-06-05T13:15:31.000Z level=INFO source=x.go:1 msg=\"runtime.x()\""))
	assert.True(t, llama.continues("  Device 0: NVIDIA GeForce RTX 4060 Ti, compute capability 8.9, VMM: yes"))
	for _, name := range []string{"llamacpp", "ollama"} {
		pp := buildPresetPipeline(t, name)
		for line, want := range map[string][3]string{
			"src/llama.cpp:3504: GGML_ASSERT(cell.has_seq_id(seq_id)) failed":                                 {"src/llama.cpp", "GGML_ASSERT(cell.has_seq_id(seq_id)) failed", ""},
			"llama-server: /work/llama.cpp-b8641/src/llama-sampler.cpp:1094: void f(): Assertion `x' failed.": {"/work/llama.cpp-b8641/src/llama-sampler.cpp", "void f(): Assertion `x' failed.", "llama-server"},
			"CUDA error: out of memory\n  current device: 0, in function alloc at ggml-cuda.cu:406":           {"", "CUDA error: out of memory\n  current device: 0, in function alloc at ggml-cuda.cu:406", ""},
		} {
			e := pp.parse(t, line)
			assert.NotContains(t, e.Attributes, attrParseError, "%s: %q", name, line)
			assert.Equal(t, "ggml.abort", e.Attributes[attrEventName], line)
			assert.Equal(t, want[1], e.Body, line)
			if want[0] != "" {
				assert.Equal(t, want[0], e.Attributes["code.file.path"], line)
				assert.Positive(t, e.Attributes["code.line.number"], line)
			}
			if want[2] != "" {
				assert.Equal(t, want[2], e.Attributes["process.executable.name"], line)
			}
		}
		e := pp.parse(t, "-- Logs begin at Mon 2024-02-26 09:47:01 CET, end at Mon 2024-02-26 17:35:39 CET. --")
		assert.Equal(t, eventJournalMarker, e.Attributes[attrEventName])
	}
}

// checkFifthCollectionRules: the rules the fifth collection taught. A
// crash's leftovers fold into the abort's record (arm64's registers, glibc's
// backtrace frames, gdb refusing to attach, the shell's "Aborted", ggml's
// lines under "CUDA error"); ROCm's and MUSA's error lines, Go's fatal
// signal and a register dump that begins the paste are records of their
// own; journalctl -x's catalog lines are collection records; SGLang's lines
// without a header (an access line without its level, "Receive: obj=", a
// tqdm bar without a description), a Rust panic in TGI and Ray Serve's own
// lines in a vLLM process parse.
func checkFifthCollectionRules(t *testing.T, ollama, llama *preset) {
	for _, l := range []string{"lr      0x19f583888", "sp      0x58f56d4e0", "pc      0x19f5495b0", "fault   0x19f5495b0", "r29     0x58f56d4d0"} {
		assert.True(t, ollama.continues(l), "ollama: %q", l)
	}
	for _, l := range []string{"libggml-base.so(ggml_abort+0x152)[0x72edb99cda02]", "/app/llama-server(+0xfb930)[0x59655a083930]", "/usr/lib/x86_64-linux-gnu/libc.so.6(__libc_start_main+0x80)[0x72edb9480e40]",
		"Could not attach to process.  If your uid matches the uid of the target", "process, check the setting of /proc/sys/kernel/yama/ptrace_scope, or try",
		"again as the root user.  For more details, see /etc/sysctl.d/10-ptrace.conf", "ptrace: Operation not permitted.", "No stack.", "The program is not being run.", "Aborted", "Aborted (core dumped)"} {
		assert.True(t, ollama.continues(l), "ollama: %q", l)
		assert.True(t, llama.continues(l), "llamacpp: %q", l)
	}
	for _, l := range []string{"  current device: 0, in function cuda_bailingmoev2_experts at /opt/ik_llama.cpp/ggml/src/ggml-cuda/argsort.cu:519", "  cudaGetLastError()"} {
		assert.True(t, llama.continues(l), "llamacpp: %q", l)
	}
	for _, l := range []string{"slot update_slots: id  0 | task 1 | n_past = 1", "       eval time =   14397.40 ms /   851 tokens", "main: loading model", "Abortedx"} {
		assert.False(t, llama.continues(l), "llamacpp: %q", l)
	}

	parses := parsesWith(t)
	for _, p := range []string{"ollama", "llamacpp"} {
		parses(p, "ROCm error: invalid device function\n  current device: 0, in function ggml_cuda_compute_forward at ggml-cuda.cu:2366", "ggml.abort")
		parses(p, "MUSA error: out of memory", "ggml.abort")
	}
	parses("ollama", "Memory critical error by agent node-0 (Agent handle: 0x5614cbbc6260) on address 0x7f5534200000. Reason: Memory in use.", "ggml.abort")
	for _, p := range []string{"ollama", "llamacpp"} {
		parses(p, "Memory access fault by GPU node-1 (Agent handle: 0x559ee9967590) on address 0x7fe05f439000. Reason: Page not present or supervisor privilege.", "ggml.abort")
	}
	parses("ollama", "SIGABRT: abort", "go.fatal_signal")
	parses("ollama", "r5      0x58f56d590\nr6      0x6e", "go.register_dump")
	assert.Contains(t, buildPresetPipeline(t, "ollama").parse(t, "SIGNAL: not a signal").Attributes, attrParseError)
	parses("llamacpp", "system info: n_threads = 16, n_threads_batch = 16, total_threads = 32", "")
	for _, l := range []string{"░░ Subject: A start job for unit ollama.service has finished successfully", "░░"} {
		parses("ollama", l, eventJournalCatalog)
	}

	e := parses("sglang", `127.0.0.1:39394 - "POST /v1/chat/completions HTTP/1.1" 200 OK`, "http.access")
	assert.EqualValues(t, 200, e.Attributes["http.response.status_code"])
	assert.Equal(t, "/v1/chat/completions", e.Attributes["url.path"])
	e = parses("sglang", `INFO:     127.0.0.1:39394 - "POST /generate HTTP/1.1" 200 OK`, "http.access")
	assert.Equal(t, "INFO", e.SeverityText)
	parses("sglang", "Receive: obj=GenerateReqInput(rid='kpKjafntFPW-pt8Pj5KZyAE', sampling_params={'temperature': 0.3}, stream=True)", "sglang.request")
	parses("sglang", "100%|██████████| 4/4 [00:01<00:00,  3.10it/s]", "sglang.progress")

	e = parses("tgi", "thread 'main' panicked at 'Unable to warmup model: Generation(\"x\")', router/src/main.rs:178:18\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace", "rust.panic")
	assert.Equal(t, entry.Fatal, e.Severity)

	e = parses("vllm", "WARNING 2026-08-19 18:00:34,543 controller 19243 -- Deployment 'LLMServer:m' in application 'a' has 1 replicas that have taken more than 30s to initialize.", "")
	assert.Equal(t, "Deployment 'LLMServer:m' in application 'a' has 1 replicas that have taken more than 30s to initialize.", e.Body)
	assert.Equal(t, "controller", e.Attributes["code.namespace"])
	assert.EqualValues(t, 19243, e.Attributes["process.pid"])
	assert.Equal(t, entry.Warn, e.Severity)
	assert.Equal(t, time.Date(2026, 8, 19, 18, 0, 34, 0, time.UTC), e.Timestamp)
}

// checkSixthCollectionRules: the rules the sixth collection (threads taken
// as they came) taught. A traceback whose start is not in the log, and a
// handler's "Exception in <name>:" before one, are Python exceptions in
// every Python server's preset; vLLM's logger lines in SGLang parse; a
// GIN line cut after the client still gives status and latency; Ollama's
// key message cut by a pager parses; a gdb backtrace or a Go stack whose
// start is not in the log is a record of its own.
func checkSixthCollectionRules(t *testing.T) {
	parses := parsesWith(t)
	fragment := "  File \"/usr/lib/python3.10/asyncio/events.py\", line 80, in _run\n    self._context.run(self._callback, *self._args)"
	for _, p := range []string{"vllm", "sglang", "tgi"} {
		e := parses(p, fragment, "python.exception")
		assert.Equal(t, entry.Error, e.Severity, p)
	}
	for _, p := range []string{"vllm", "sglang"} {
		parses(p, "Exception in ModelTpServer:\nTraceback (most recent call last):\n  File \"x.py\", line 1, in f", "python.exception")
	}
	assert.Contains(t, buildPresetPipeline(t, "sglang").parse(t, "Exception in ModelTpServer: not a traceback header").Attributes, attrParseError)

	e := parses("sglang", "INFO 03-07 09:19:58 __init__.py:190] Automatically detected platform cuda.", "")
	assert.Equal(t, "Automatically detected platform cuda.", e.Body)
	assert.Equal(t, "__init__.py", e.Attributes["code.file.path"])
	assert.Equal(t, entry.Info, e.Severity)

	e = parses("ollama", "[GIN] 2023/12/15 - 15:34:10 | 200 |     178.535µs |       127.0.0.1", "http.access")
	assert.EqualValues(t, 200, e.Attributes["http.response.status_code"])
	assert.NotContains(t, e.Attributes, "http.request.method")
	parses("ollama", "Couldn't find '/usr/share/ollama/.ollama/id_ed25519'. Generating ne", "ollama.keypair")
	parses("ollama", "llama server listening at http://127.0.0.1:8080", "runner.listening")
	for _, p := range []string{"ollama", "llamacpp"} {
		e = parses(p, "[Thread debugging using libthread_db enabled]\n#0  0x00007735c7aea42f in wait4 () from /lib/x86_64-linux-gnu/libc.so.6", "ggml.backtrace")
		assert.Equal(t, entry.Error, e.Severity, p)
	}
	e = parses("ollama", "\truntime/asm_amd64.s:1700 +0x1 fp=0xc00004bfe8 sp=0xc00004bfe0 pc=0x555dc985de81\ncreated by net/http.(*Server).Serve in goroutine 1", "go.stack")
	assert.Equal(t, entry.Error, e.Severity)
}

// checkSeventhCollectionRules: the rules the seventh collection (threads
// taken as they came) taught. A traceback fragment that opens at the code
// line above a frame is a Python exception; torch's and SGLang's advice
// lines fold into the exception; a TGI Args dump without its start is
// tgi.args; llama.cpp's chat template source folds; llama-swap's access
// lines parse with status and latency; a Metal shader compile's
// diagnostics are a record; a driver's "radv/amdgpu:" line parses.
func checkSeventhCollectionRules(t *testing.T, llama *preset) {
	parses := parsesWith(t)
	for _, p := range []string{"vllm", "sglang", "tgi"} {
		parses(p, "    return self.model.forward(\n  File \"/opt/x.py\", line 497, in forward\n    hidden_states = self.model(", "python.exception")
	}
	sglang, err := loadPreset("sglang", presetParams{Location: "UTC"})
	require.NoError(t, err)
	for _, l := range []string{"Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace", "To work around this error, add --disable-piecewise-cuda-graph to your launch command.",
		"Piecewise CUDA Graph is enabled by default as an experimental feature."} {
		assert.True(t, sglang.continues(l), "%q", l)
	}
	parses("tgi", "    shard_uds_path: \"/tmp/text-generation-server\",\n    master_port: 29500,", "tgi.args")
	for _, l := range []string{"{%- if add_generation_prompt -%}", "    {{'<start_of_turn>model", "' }}", "'}}", "Hello<end_of_turn>", "<start_of_turn>user",
		", example_format: '<start_of_turn>user", "In file included from program_source:2837:", "}",
		"/opt/lib/libggml-base.so.0(ggml_print_backtrace+0x21c) [0x733d6e8b968c]"} {
		assert.True(t, llama.continues(l), "%q", l)
	}
	e := parses("llamacpp", `[llama-swap] 172.18.0.1 [2025-03-20 20:41:16] "GET /upstream/gemma-3-12b/ HTTP/1.1" 200 1260534 "Mozilla/5.0" 10.260119763s`, "http.access")
	assert.EqualValues(t, 200, e.Attributes["http.response.status_code"])
	assert.InDelta(t, 10.260119763, e.Attributes["http.server.request.duration"], 1e-9)
	assert.Equal(t, "/upstream/gemma-3-12b/", e.Attributes["url.path"])
	for _, p := range []string{"llamacpp", "ollama"} {
		e = parses(p, "In file included from program_source:2837:\n/System/x.h:3267:5: error: static_assert failed", "ggml.shader_compile")
		assert.Equal(t, entry.Error, e.Severity)
	}
	e = parses("llamacpp", "radv/amdgpu: The CS has been cancelled because the context is lost. This context is innocent.", "")
	assert.Equal(t, "radv/amdgpu", e.Attributes["llamacpp.subsystem"])
}

// parsesWith returns a check that preset parses line without a parse
// error, as event when event is set, and gives the record.
func parsesWith(t *testing.T) func(preset, line, event string) *entry.Entry {
	return func(preset, line, event string) *entry.Entry {
		t.Helper()
		e := buildPresetPipeline(t, preset).parse(t, line)
		assert.NotContains(t, e.Attributes, attrParseError, "%s: %q", preset, line)
		if event != "" {
			assert.Equal(t, event, e.Attributes[attrEventName], "%s: %q", preset, line)
		}
		return e
	}
}

// checkEighthCollectionRules: the rules the eighth collection (threads taken
// as they came) taught. SGLang 0.1's "[gpu_id=N]" prefix and its rpyc
// connection lines, transformers' special-tokens warning, NIXL's logger in
// vLLM, llama-server --version's "built with" line, the C++ runtime's
// "libc++abi: terminating", and old llama.cpp's "llama.cpp: " lines in
// Ollama parse.
func checkEighthCollectionRules(t *testing.T) {
	parses := parsesWith(t)
	e := parses("sglang", "[gpu_id=0] Load weight begin. avail mem=78.27 GB", "")
	assert.Equal(t, "Load weight begin. avail mem=78.27 GB", e.Body)
	assert.EqualValues(t, 0, e.Attributes["sglang.gpu_id"])
	for _, l := range []string{"server started on [0.0.0.0]:10014", "accepted ('127.0.0.1', 55860) with fd 52", "welcome ('127.0.0.1', 55860)"} {
		parses("sglang", l, "rpyc.connection")
	}
	assert.Contains(t, buildPresetPipeline(t, "sglang").parse(t, "server started on port eight").Attributes, attrParseError)
	for _, p := range []string{"vllm", "sglang"} {
		parses(p, "Special tokens have been added in the vocabulary, make sure the associated word embeddings are fine-tuned or trained.", "transformers.special_tokens")
	}
	e = parses("vllm", "NIXL INFO    _api.py:361 Backend UCX was instantiated", "")
	assert.Equal(t, "Backend UCX was instantiated", e.Body)
	assert.Equal(t, entry.Info, e.Severity)
	parses("llamacpp", "built with cc (Debian 10.2.1-6) 10.2.1 20210110 for x86_64-linux-gnu", "llamacpp.version")
	parses("llamacpp", "libc++abi: terminating", "ggml.abort")
	e = parses("ollama", "llama.cpp: loading model from /models/blobs/sha256-1", "")
	assert.Equal(t, "llama.cpp", e.Attributes["ollama.runner.subsystem"])
}
