"""Locust anchor for the llm_loadgen live-mode benchmark.

Each user streams chat completions from an OpenAI-compatible endpoint with
requests (HttpUser), parses the server-sent events line by line, and times
every event: TTFT is the first chunk with content, as llm_loadgen defines
it. Each finished request appends "request_id,ttft_seconds,chunks" to the
file named by LOCUST_RESULTS so the benchmark can compare it with the mock
server's ground truth.
"""
import json
import os
import time

from locust import HttpUser, task

BODY = json.dumps({
    "model": "mock-llm",
    "stream": True,
    "stream_options": {"include_usage": True},
    "max_tokens": 128,
    "messages": [
        {"role": "system", "content": "You are a concise assistant."},
        {"role": "user", "content": "Summarize the following notes in three sentences."},
    ],
})
HEADERS = {"Content-Type": "application/json", "Accept": "text/event-stream", "Accept-Encoding": "identity"}
OUT = open(os.environ.get("LOCUST_RESULTS", "/dev/null"), "a", buffering=1)


class StreamingUser(HttpUser):
    # No think time: every user sends its next request as soon as the last ends.
    wait_time = lambda self: 0  # noqa: E731

    @task
    def chat(self):
        start = time.perf_counter()
        ttft = None
        chunks = 0
        done = False
        with self.client.post("/v1/chat/completions", data=BODY, headers=HEADERS, stream=True,
                              catch_response=True, name="chat") as resp:
            if resp.status_code != 200:
                resp.failure("HTTP %d" % resp.status_code)
                return
            for line in resp.iter_lines():
                if not line or line.startswith(b":"):
                    continue
                if not line.startswith(b"data:"):
                    continue
                data = line[5:].strip()
                if data == b"[DONE]":
                    done = True
                    break
                chunk = json.loads(data)
                for choice in chunk.get("choices") or []:
                    delta = choice.get("delta") or {}
                    if delta.get("content"):
                        if ttft is None:
                            ttft = time.perf_counter() - start
                        chunks += 1
            if not done:
                resp.failure("stream ended without [DONE]")
                return
            resp.success()
        OUT.write("%s,%.6f,%d\n" % (resp.headers.get("X-Request-Id", ""), ttft or 0.0, chunks))
