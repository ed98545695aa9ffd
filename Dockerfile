# otelcol-llm container image.
#
# go-nvml loads libnvidia-ml.so.1 through cgo, so the binary is linked against
# glibc and the runtime image is Debian slim rather than scratch. The NVIDIA
# container runtime injects the driver library when the pod asks for it.
#
#   docker build -t otelcol-llm:0.1.0 .
#   docker run --rm -p 4317:4317 -p 4318:4318 -p 13133:13133 -p 8888:8888 otelcol-llm:0.1.0

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN make build && cp cmd/otelcol-llm/otelcol-llm /otelcol-llm

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 otelcol \
 && useradd --system --uid 10001 --gid otelcol --no-create-home --shell /usr/sbin/nologin otelcol
COPY --from=build --chmod=755 /otelcol-llm /otelcol-llm
COPY configs/otlp.yaml /etc/otelcol-llm/config.yaml
# Listen on all interfaces inside the container; the default config binds loopback.
ENV OTELCOL_LLM_LISTEN_HOST=0.0.0.0
USER 10001:10001
# OTLP gRPC, OTLP HTTP, health check, self-metrics
EXPOSE 4317 4318 13133 8888
ENTRYPOINT ["/otelcol-llm"]
CMD ["--config", "/etc/otelcol-llm/config.yaml"]
