package inferencelogreceiver

import (
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCollectionEvent(t *testing.T) {
	for _, tc := range []struct {
		body  string
		attrs map[string]any
		want  string
	}{
		{"", map[string]any{}, emptyMessage},
		{"[100B blob data]", map[string]any{}, eventBlob},
		{"[48B blob data]", map[string]any{attrProcessName: "llama-server"}, eventBlob},
		{"[B blob data]", map[string]any{}, ""},
		{"[1x0B blob data]", map[string]any{}, ""},
		{"x [100B blob data]", map[string]any{}, ""},
		{"Started Ollama Service.", map[string]any{attrProcessName: "systemd"}, eventSystemd},
		{"Started Ollama Service.", map[string]any{attrProcessName: "ollama"}, ""},
		{"INFO 11-29 17:40:02 [x.py:1] y", map[string]any{}, ""},
		{"2026-02-02 17:59:02.735", map[string]any{}, eventViewerColumn},
		{"2024-04-18T18:45:35.144-04:00", map[string]any{}, eventViewerColumn},
		{"info", map[string]any{}, eventViewerColumn},
		{"informative", map[string]any{}, ""},
		{"2026-02-02 17:59:02.735 the rest", map[string]any{}, ""},
	} {
		assert.Equal(t, tc.want, collectionEvent(tc.body, tc.attrs), "body %q attrs %v", tc.body, tc.attrs)
	}
}

// TestCollectionRecordsSkipTheGrammar: every preset takes what log
// collection made as parsed records, not as lines of the server.
func TestCollectionRecordsSkipTheGrammar(t *testing.T) {
	for _, name := range presetNames {
		pp := buildPresetPipeline(t, name)
		e := pp.parse(t, "[100B blob data]")
		assert.Equal(t, eventBlob, e.Attributes[attrEventName], name)
		assert.NotContains(t, e.Attributes, attrParseError, name)
		e = pp.parse(t, "")
		assert.NotContains(t, e.Attributes, attrParseError, name)
		assert.NotContains(t, e.Attributes, attrEventName, name)
		assert.Equal(t, name, e.Attributes[attrServer])
	}
}

// A shell's report that the server died of a signal is a FATAL record of
// its own that names the signal and, where the shell prints it, the
// command; ProcDump's lines on Windows are records too. Lines that only
// look alike go to the grammar.
func TestShellAndCrashToolRecords(t *testing.T) {
	for _, tc := range []struct {
		line, event, signal, cmd string
		sev                      entry.Severity
	}{
		{"Killed", eventShellDeath, "SIGKILL", "", entry.Fatal},
		{"Segmentation fault (core dumped)", eventShellDeath, "SIGSEGV", "", entry.Fatal},
		{"[1]    474256 segmentation fault  ./server -m Llama/llama-2-13b-chat.Q4_K_M.gguf --port ", eventShellDeath, "SIGSEGV", "./server -m Llama/llama-2-13b-chat.Q4_K_M.gguf --port", entry.Fatal},
		{"[1]+  Killed                  python -m vllm.entrypoints.openai.api_server", eventShellDeath, "SIGKILL", "python -m vllm.entrypoints.openai.api_server", entry.Fatal},
		{"./run.sh: line 3: 12345 Bus error               (core dumped) python x.py", eventShellDeath, "SIGBUS", "python x.py", entry.Fatal},
		{"Aborted (core dumped) /usr/bin/llama-server -m m.gguf", eventShellDeath, "SIGABRT", "/usr/bin/llama-server -m m.gguf", entry.Fatal},
		{"zsh: killed     ollama serve", eventShellDeath, "SIGKILL", "ollama serve", entry.Fatal},
		{"Illegal instruction (core dumped)", eventShellDeath, "SIGILL", "", entry.Fatal},
		{"[01:16:13]Exception: C0000005.ACCESS_VIOLATION", "procdump.exception", "", "", entry.Error},
		{"[19:05:23] Unhandled: E0434352.CLR", "procdump.exception", "", "", entry.Fatal},
		{`[01:16:13] Dump 1 initiated: C:\CrashDumps\llama-server.exe_260304_011613.dmp`, "procdump.dump", "", "", entry.Info},
	} {
		e := entry.New()
		e.Body = tc.line
		require.True(t, (&classifyOperator{}).classify(e), tc.line)
		assert.Equal(t, tc.event, e.Attributes[attrEventName], tc.line)
		assert.Equal(t, tc.sev, e.Severity, tc.line)
		if tc.signal != "" {
			assert.Equal(t, tc.signal, e.Attributes[attrSignal], tc.line)
		}
		if tc.cmd != "" {
			assert.Equal(t, tc.cmd, e.Attributes[attrProcessCmd], tc.line)
		} else {
			assert.NotContains(t, e.Attributes, attrProcessCmd, tc.line)
		}
	}
	for _, l := range []string{"Killed request 42 after 30 s", "INFO 11-29 17:40:02 [api_server.py:1] Killed", "Segmentation fault in kernel x at line 3",
		"[12:00:00] Exceptional throughput", "Aborted request cmpl-1."} {
		e := entry.New()
		e.Body = l
		assert.False(t, (&classifyOperator{}).classify(e), l)
	}
}

// After a shell's prompt (peeled by unwrap), a command line is a record of
// its own; a server's line after a prompt goes to the grammar.
func TestShellCommandRecords(t *testing.T) {
	for line, want := range map[string]bool{
		"python3 -m sglang.launch_server --model-path m --port 42069":                     true,
		"CUDA_VISIBLE_DEVICES=0,1 text-generation-launcher --model-id m":                  true,
		"./llama-server -m model.gguf --port 8080\nggml_cuda_init: found 1 CUDA devices:": true,
		"WARNING 11-25 10:47:23 config.py:398] Casting torch.bfloat16 to torch.float16.":  false,
		"main: build = 1 (abc)": false,
		"srv  log_server_r: request: POST /completion 127.0.0.1 200": false,
	} {
		e := entry.New()
		e.Body = line
		e.Attributes = map[string]any{attrShellPrompt: "root@h:~$"}
		assert.Equal(t, want, (&classifyOperator{}).classify(e), line)
		if want {
			assert.Equal(t, eventShellCommand, e.Attributes[attrEventName], line)
		}
		e = entry.New()
		e.Body = line
		launch := launchCommandPattern.MatchString(line)
		assert.Equal(t, want && launch, (&classifyOperator{}).classify(e), "no prompt: %s", line)
	}
}

// A server's launch command is a record of its own without a prompt too;
// other lines are not taken for one.
func TestLaunchCommandWithoutPrompt(t *testing.T) {
	for line, want := range map[string]bool{
		"CUDA_VISIBLE_DEVICES=2 python -m sglang.launch_server --model-path m --port 30000": true,
		"python3 -m vllm.entrypoints.openai.api_server --model m":                           true,
		"vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2":                                 true,
		"./llama-server -m model.gguf -ngl 99":                                              true,
		"ollama serve":                                                                      true,
		"python x.py":                                                                       false,
		"vllm serving requests":                                                             false,
		"INFO 11-29 17:40:02 [api_server.py:1] vllm serve started":                          false,
	} {
		e := entry.New()
		e.Body = line
		assert.Equal(t, want, (&classifyOperator{}).classify(e), line)
	}
}
