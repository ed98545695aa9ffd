package inferencelogreceiver

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnwrap(t *testing.T) {
	const vllm = `INFO 11-29 17:40:02 [api_server.py:1896] vLLM API server version 0.11.0`
	const tgi = `2024-05-10T12:00:00.123456Z  INFO text_generation_launcher: Starting shard rank=0`
	for _, tc := range []struct {
		name, in, want string
		attrs          map[string]any
	}{
		{"plain", vllm, vllm, map[string]any{}},
		{"tgi's own timestamp stays", tgi, tgi, map[string]any{}},
		{"kubectl --timestamps", "2025-11-29T17:40:02.123456789Z " + vllm, vllm,
			map[string]any{attrWrapperTime: "2025-11-29T17:40:02.123456789Z"}},
		{"kubectl around tgi", "2024-05-10T12:00:00.200000000Z " + tgi, tgi,
			map[string]any{attrWrapperTime: "2024-05-10T12:00:00.200000000Z"}},
		{"log export time, then tgi's own", "2024-04-18T18:44:03.144-04:00   " + tgi, tgi, map[string]any{attrWrapperTime: "2024-04-18T18:44:03.144-04:00"}},
		{"tgi error record keeps its time", "2024-05-10T12:00:00.123456Z ERROR text_generation_launcher: Shard 0 failed", "2024-05-10T12:00:00.123456Z ERROR text_generation_launcher: Shard 0 failed", map[string]any{}},
		{"kubectl around a vllm error", "2025-11-29T17:40:02Z ERROR 11-29 17:42:09 [engine.py:160] x", "ERROR 11-29 17:42:09 [engine.py:160] x", map[string]any{attrWrapperTime: "2025-11-29T17:40:02Z"}},
		{"docker compose container name", "sglang  | " + vllm, vllm, map[string]any{attrContainerName: "sglang"}},
		{"docker compose bracketed name", "[text-generation-inference] | " + tgi, tgi, map[string]any{attrContainerName: "text-generation-inference"}},
		{"k9s box", "│ " + tgi + "      │", tgi, map[string]any{}},
		{"kubectl around a traceback frame keeps its indentation", "2025-11-29T17:40:02Z   File \"x.py\", line 1", `  File "x.py", line 1`, map[string]any{attrWrapperTime: "2025-11-29T17:40:02Z"}},
		{"loki export with a tab", "2025-06-24T10:00:00.000Z\t" + vllm, vllm, map[string]any{attrWrapperTime: "2025-06-24T10:00:00.000Z"}},
		{"docker compose v2", "vllm-1  | " + vllm, vllm, map[string]any{attrContainerName: "vllm-1"}},
		{"docker compose v1", "vllm_openai_1 | " + vllm, vllm, map[string]any{attrContainerName: "vllm_openai_1"}},
		{"journald", "May 12 06:47:18 gpu-node-3 ollama[1234]: time=2024-05-12T06:47:18.123+08:00 level=INFO msg=x", "time=2024-05-12T06:47:18.123+08:00 level=INFO msg=x",
			map[string]any{attrHostName: "gpu-node-3", attrProcessName: "ollama", attrProcessPID: int64(1234)}},
		{"rsyslog high-precision time", "2026-07-28T20:08:39.809061-04:00 t0 llama-server[1686919]: [42751] 107.53.131.684 I srv  x", "107.53.131.684 I srv  x",
			map[string]any{attrWrapperTime: "2026-07-28T20:08:39.809061-04:00", attrHostName: "t0", attrProcessName: "llama-server", attrProcessPID: int64(42751)}},
		{"syslog day padded, no pid", "May  2 06:47:18 host vllm: " + vllm, vllm, map[string]any{attrHostName: "host", attrProcessName: "vllm"}},
		{"syslog repeat", "message repeated 3 times: [ " + vllm + "]", vllm, map[string]any{attrRepeated: int64(3)}},
		{"vllm process prefix", "(EngineCore_DP0 pid=3120) " + vllm, vllm, map[string]any{attrProcessTitle: "EngineCore_DP0", attrProcessPID: int64(3120)}},
		{"journal identifier only", "ollama[1291103]: time=2025-11-02T17:14:49.986Z level=DEBUG msg=x", "time=2025-11-02T17:14:49.986Z level=DEBUG msg=x",
			map[string]any{attrProcessName: "ollama", attrProcessPID: int64(1291103)}},
		{"supervisor tag", "llama-server [falcon-7b:2048:6]: INFO [ main] x", "INFO [ main] x", map[string]any{attrProcessName: "llama-server", attrProcessTitle: "falcon-7b:2048:6"}},
		{"pm2", "0|pv_scheduler  | llama-server: INFO [ main] x", "llama-server: INFO [ main] x", map[string]any{attrProcessTitle: "pv_scheduler"}},
		{"vllm worker tp prefix", "(VllmWorker TP0 pid=1035573) " + vllm, vllm, map[string]any{attrProcessTitle: "VllmWorker", attrProcessPID: int64(1035573)}},
		{"ci bracketed time", "[2025-12-13T19:54:35Z] (Worker_TP0 pid=9260) " + vllm, vllm, map[string]any{attrWrapperTime: "2025-12-13T19:54:35Z", attrProcessTitle: "Worker_TP0", attrProcessPID: int64(9260)}},
		{"vllm worker engine index prefix", "(VllmWorker rank=0 engine_index=0 pid=31774) " + vllm, vllm, map[string]any{attrProcessTitle: "VllmWorker", attrProcessPID: int64(31774)}},
		{"vllm worker rank prefix", "(VllmWorker rank=1 pid=77) " + vllm, vllm, map[string]any{attrProcessTitle: "VllmWorker", attrProcessPID: int64(77)}},
		{"ray prefix and repeat suffix", "(WorkerDict pid=26105, ip=10.0.0.5) [2025-11-20 01:12:06] Downcasting. [repeated 3x across cluster]", "[2025-11-20 01:12:06] Downcasting.",
			map[string]any{attrProcessTitle: "WorkerDict", attrProcessPID: int64(26105), attrRepeated: int64(3)}},
		{"ray prefix keeps a frame's indentation", "(WorkerDict pid=26103)   File \"x.py\", line 1, in f", `  File "x.py", line 1, in f`,
			map[string]any{attrProcessTitle: "WorkerDict", attrProcessPID: int64(26103)}},
		{"a prefix alone (an empty line of the process)", "(WorkerDict pid=26103)", "", map[string]any{attrProcessTitle: "WorkerDict", attrProcessPID: int64(26103)}},
		{"log viewer column", "2025-05-30 09:55:22.281 | " + vllm, vllm, map[string]any{attrWrapperTime: "2025-05-30 09:55:22.281"}},
		{"djl serving relay", "[INFO ] PyProcess - W-210-model-stdout: " + vllm, vllm, map[string]any{attrProcessTitle: "W-210-model"}},
		{"journald, French month", "janv. 20 23:15:05 jarvis-server ollama[1232]: time=x level=INFO", "time=x level=INFO", map[string]any{attrHostName: "jarvis-server", attrProcessName: "ollama", attrProcessPID: int64(1232)}},
		{"journald, German month", "Okt 05 10:00:01 gpu ollama[7]: time=x level=INFO", "time=x level=INFO", map[string]any{attrHostName: "gpu", attrProcessName: "ollama", attrProcessPID: int64(7)}},
		{"journald, numeric date", "06.05 13:15:31 ASTOR ollama[2690]: goroutine 35 gp=0xc0005041c0 m=nil [GC worker (idle)]:", "goroutine 35 gp=0xc0005041c0 m=nil [GC worker (idle)]:", map[string]any{attrHostName: "ASTOR", attrProcessName: "ollama", attrProcessPID: int64(2690)}},
		{"pino json relay", `{"level":30,"time":1752516972752,"pid":10104,"hostname":"Ryzen7","msg":"[GIN] 2025/07/14 - 19:16:12 | 500 |    1.5308332s |       127.0.0.1 | POST     \"/api/chat\"\n"}`,
			`[GIN] 2025/07/14 - 19:16:12 | 500 |    1.5308332s |       127.0.0.1 | POST     "/api/chat"`, map[string]any{attrWrapperTime: "2025-07-14T18:16:12.752Z", attrHostName: "Ryzen7", attrProcessPID: int64(10104)}},
		{"a llama.cpp runner json line is no pino line", `{"timestamp":1701615522,"level":"INFO","function":"f","line":1,"message":"request"}`, `{"timestamp":1701615522,"level":"INFO","function":"f","line":1,"message":"request"}`, map[string]any{}},
		{"markdown quote and ESC spelled out", "> (EngineCore_DP0 pid=35109)ESC[0;0m ERROR 09-17 05:40:55 [v1/engine/core.py:712] EngineCore failed to start.", "ERROR 09-17 05:40:55 [v1/engine/core.py:712] EngineCore failed to start.",
			map[string]any{attrProcessTitle: "EngineCore_DP0", attrProcessPID: int64(35109)}},
		{"loguru's marker is no quote", "> File \"/x.py\", line 1", "> File \"/x.py\", line 1", map[string]any{}},
		{"a code fence's stray backtick", "`" + tgi, tgi, map[string]any{}},
		{"backticks of inline code stay", "`torch_dtype` is deprecated! Use `dtype` instead!", "`torch_dtype` is deprecated! Use `dtype` instead!", map[string]any{}},
		{"journald, localized month", "9月 02 14:46:54 yons-Z790 ollama[1756203]: time=x level=INFO", "time=x level=INFO", map[string]any{attrHostName: "yons-Z790", attrProcessName: "ollama", attrProcessPID: int64(1756203)}},
		{"journald, empty message", "Oct 06 13:38:58 CX600 ollama[1992]:", "", map[string]any{attrHostName: "CX600", attrProcessName: "ollama", attrProcessPID: int64(1992)}},
		{"journald, empty host and a colon in the tag", "Jun 18 08:58:34  llama-Qwen:[1351]: 11.07.572.806 I slot x", "11.07.572.806 I slot x", map[string]any{attrHostName: "", attrProcessName: "llama-Qwen:", attrProcessPID: int64(1351)}},
		{"docker desktop column", "2025-03-05 08:58:54 time=2025-03-05T06:58:54.116Z level=INFO", "time=2025-03-05T06:58:54.116Z level=INFO", map[string]any{attrWrapperTime: "2025-03-05 08:58:54"}},
		{"python logging's own time stays", "2024-04-28 03:36:06,220 xinference.core 3456676 DEBUG x", "2024-04-28 03:36:06,220 xinference.core 3456676 DEBUG x", map[string]any{}},
		{"supervisor pid column", "[42027] 1.35.716.244 I slot print_timing: id  0", "1.35.716.244 I slot print_timing: id  0", map[string]any{attrProcessPID: int64(42027)}},
		{"python logging relay", "2025-03-07 23:50:27,531 - __main__ - INFO - [2025-03-07 23:50:27 TP0] Init torch distributed begin.", "[2025-03-07 23:50:27 TP0] Init torch distributed begin.",
			map[string]any{attrWrapperTime: "2025-03-07 23:50:27,531", attrRelayLogger: "__main__"}},
		{"container column before a time", "llamadevinit " + tgi, tgi, map[string]any{attrContainerName: "llamadevinit"}},
		{"torch rank", "[rank0]: " + vllm, vllm, map[string]any{attrRank: int64(0)}},
		{"ansi escapes", "\x1b[2m2024-05-10T12:00:00.123456Z\x1b[0m \x1b[32m INFO\x1b[0m \x1b[2mtext_generation_launcher\x1b[0m\x1b[2m:\x1b[0m Starting shard rank=0",
			"2024-05-10T12:00:00.123456Z  INFO text_generation_launcher: Starting shard rank=0", map[string]any{}},
		{"ansi as literal text", "#033[2m2024-05-10T12:00:00.123456Z#033[0m #033[32m INFO#033[0m text_generation_launcher: Starting shard rank=0", tgi, map[string]any{}},
		{"ansi with the escape byte lost", "[2mtext_generation_launcher [0m [2m: [0m Args { model_id: \"x\" }", `text_generation_launcher: Args { model_id: "x" }`, map[string]any{}},
		{"brackets without a reset stay", "[2m] not a colour code", "[2m] not a colour code", map[string]any{}},
		{"html colours", `<font color="#2AA1B3"><b>(APIServer pid=1)</b></font> ` + vllm, vllm, map[string]any{attrProcessTitle: "APIServer", attrProcessPID: int64(1)}},
		{"html colours, entities unescaped", `<span style="color:red">WARNING 11-29 17:40:02 [x.py:1] a &lt; b &amp;&amp; c</span>`, `WARNING 11-29 17:40:02 [x.py:1] a < b && c`, map[string]any{}},
		{"a closing tag that is not a colour stays", `INFO 11-29 17:40:02 [x.py:1] rendered </div> &lt;`, `INFO 11-29 17:40:02 [x.py:1] rendered </div> &lt;`, map[string]any{}},
		{"ctrl-c echo", "^CINFO:     Shutting down", "INFO:     Shutting down", map[string]any{}},
		{"ctrl-c byte", "\x03" + vllm, vllm, map[string]any{}},
		{"caret ansi", "^[[97;42m 200 ^[[0m| 1.2s", " 200 | 1.2s", map[string]any{}},
		{"stacked: journald, compose-less docker time, rank", "Dec  1 10:00:00 node dockerd[99]: 2025-12-01T10:00:00Z [rank1]: " + vllm, vllm,
			map[string]any{attrHostName: "node", attrProcessName: "dockerd", attrProcessPID: int64(99), attrWrapperTime: "2025-12-01T10:00:00Z", attrRank: int64(1)}},
		{"a pipe is not a compose prefix", "slot launch_slot_: id  0 | task 0 | processing task", "slot launch_slot_: id  0 | task 0 | processing task", map[string]any{}},
		{"ansi with the escape shown as the replacement character", "\uFFFD[34m2.53.771.327\uFFFD[0m \uFFFD[35mW slot update_slots: id  0 | task 205 | n_past = 29393",
			"2.53.771.327 W slot update_slots: id  0 | task 205 | n_past = 29393", map[string]any{}},
		{"collector time with the offset apart and the zone's name", "2025-10-24T17:12:08.363544040 +08:00 CST (APIServer pid=1) " + vllm, vllm,
			map[string]any{attrWrapperTime: "2025-10-24T17:12:08.363544040 +08:00 CST", attrProcessTitle: "APIServer", attrProcessPID: int64(1)}},
		{"quoted journald with a placeholder host", "> Jun 05 12:36:11 <ollama server> ollama[25973]: time=x level=INFO", "time=x level=INFO",
			map[string]any{attrHostName: "<ollama server>", attrProcessName: "ollama", attrProcessPID: int64(25973)}},
		{"ray serve's nested process prefixes", "(ServeReplica:app:LLMServer:m-1 pid=28488) (EngineCore pid=29087) (RayWorkerProc pid=29271) " + vllm, vllm,
			map[string]any{attrProcessTitle: "RayWorkerProc", attrProcessPID: int64(29271)}},
		{"gin line kept", `[GIN] 2024/05/12 - 06:47:18 | 200 |  1.2s |  127.0.0.1 | POST "/api/chat"`, `[GIN] 2024/05/12 - 06:47:18 | 200 |  1.2s |  127.0.0.1 | POST "/api/chat"`, map[string]any{}},
		{"rsyslog's escaped tab", "May  9 12:03:55 rab-wksta ollama[1155399]: #011net/http/server.go:3454 +0x485", "\tnet/http/server.go:3454 +0x485",
			map[string]any{attrHostName: "rab-wksta", attrProcessName: "ollama", attrProcessPID: int64(1155399)}},
		{"two escaped tabs", "#011#011x.go:1", "\t\tx.go:1", map[string]any{}},
		{"a paste indented as a whole", ` [2026-06-15 13:26:40 TP0] Scheduler hit an exception: Traceback (most recent call last):`,
			`[2026-06-15 13:26:40 TP0] Scheduler hit an exception: Traceback (most recent call last):`, map[string]any{}},
		{"an indented vllm line", "   " + vllm, vllm, map[string]any{}},
		{"an indented tgi line", " " + tgi, tgi, map[string]any{}},
		{"an indented process prefix", "  (APIServer pid=1) " + vllm, vllm, map[string]any{attrProcessTitle: "APIServer", attrProcessPID: int64(1)}},
		{"a frame stays indented", `   File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 4062, in run_scheduler_process`,
			`   File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 4062, in run_scheduler_process`, map[string]any{}},
		{"four spaces are a continuation's", "    " + vllm, "    " + vllm, map[string]any{}},
		{"a shell's job line is no pid column", "[1]    474256 segmentation fault  ./server -m m.gguf --port", "[1]    474256 segmentation fault  ./server -m m.gguf --port", map[string]any{}},
		{"lemonade's prefix", "2026-05-17 12:33:05.655 [Info] (Process) llama_context: n_ctx         = 131072", "llama_context: n_ctx         = 131072",
			map[string]any{attrWrapperTime: "2026-05-17 12:33:05.655", attrProcessTitle: "Process"}},
		{"a shell prompt before the command", "root@C.10082074:~$ python3 -m sglang.launch_server --port 42069", "python3 -m sglang.launch_server --port 42069",
			map[string]any{attrShellPrompt: "root@C.10082074:~$"}},
		{"a conda prompt before the server's first line", "(songdh) [root@localhost server_llm]# WARNING 11-25 10:47:23 config.py:398] Casting torch.bfloat16 to torch.float16.",
			"WARNING 11-25 10:47:23 config.py:398] Casting torch.bfloat16 to torch.float16.", map[string]any{attrShellPrompt: "(songdh) [root@localhost server_llm]#"}},
		{"a prompt whose user and host were cut", ":~/Downloads/text-generation-inference$ text-generation-launcher --model-id m", "text-generation-launcher --model-id m",
			map[string]any{attrShellPrompt: ":~/Downloads/text-generation-inference$"}},
		{"a pager's ^M", "llm_load_tensors: offloaded 0/33 layers to GPU^M", "llm_load_tensors: offloaded 0/33 layers to GPU", map[string]any{}},
		{"an e-mail address is no prompt", "user@example.com: sent $5", "user@example.com: sent $5", map[string]any{}},
		{"a pid column before indented text", "[42027]        eval time =   16112.50 ms", "       eval time =   16112.50 ms", map[string]any{attrProcessPID: int64(42027)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			attrs := map[string]any{}
			assert.Equal(t, tc.want, unwrap(tc.in, attrs))
			assert.Equal(t, tc.attrs, attrs)
		})
	}
}

// processPrefixCases are the edges of matchProcessPrefix, the hand-written
// processPattern.
var processPrefixCases = []string{
	"(APIServer pid=2914) INFO 11-29 17:41:30 [x.py:1] y",
	"(VllmWorker rank=1 pid=77) x", "(WorkerDict pid=26105, ip=10.0.0.5) x", "(WorkerDict pid=26103)",
	"(WorkerDict pid=26103) ", "(A pid=1)x", "(A pid=) x", "(A  pid=1) x", "(A rank= pid=1) x", "(A rank=1x pid=1) x",
	"(A pid=1, ip=) x", "(A pid=1, ip=1.2.x) x", "(a.b-c_d pid=9) x", "(a/b pid=9) x", "( pid=9) x", "(A pid=1) x)",
	"(A pid=1 ) x", "(A pid=1, ip=1.2.3.4, more) x", "(A rank=1 rank=2 pid=1) x", "(A pid=1) x\ny",
	"(VllmWorker rank=0 engine_index=0 pid=31774) x", "(A pid=1 pid=2) x", "(A Rank=1 pid=2) x", "(A pid=1, ip=1.2.3.4) x",
	"(A rank=1, ip=1.2.3.4 pid=2) x", "(A x=1 pid=2, ip=3)", "(VllmWorker TP0 pid=5) x", "(A TP pid=5) x", "(A 0 pid=5) x",
	"(A T=P0 pid=5) x", "(A TP0= pid=5) x", "(A pid5 pid=5) x",
	"(ServeReplica:app:LLMServer:model-1 pid=28488) (EngineCore pid=29087) x", "(: pid=1) x", "(a::b pid=1) x",
}

func TestProcessPrefixMatchesPattern(t *testing.T) {
	for _, l := range processPrefixCases {
		assert.Equal(t, processPattern.FindStringSubmatch(l), matchProcessPrefix(l), "line %q", l)
	}
}

// FuzzProcessPrefix: the hand-written matcher agrees with the pattern it
// replaces on any line.
func FuzzProcessPrefix(f *testing.F) {
	for _, l := range processPrefixCases {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, l string) {
		if !strings.HasPrefix(l, "(") || !strings.Contains(l, " pid=") {
			return // the peeler's quick check keeps these from either
		}
		require.Equal(t, processPattern.FindStringSubmatch(l), matchProcessPrefix(l), "line %q", l)
	})
}
