{{/* Chart name, truncated to the 63 characters Kubernetes names allow. */}}
{{- define "otelcol-llm.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: <release>-<chart>-<mode>, unless overridden. */}}
{{- define "otelcol-llm.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- printf "%s-%s" .Release.Name .Values.mode | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s-%s" .Release.Name $name .Values.mode | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "otelcol-llm.selectorLabels" -}}
app.kubernetes.io/name: {{ include "otelcol-llm.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: {{ .Values.mode }}
{{- end }}

{{- define "otelcol-llm.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "otelcol-llm.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: otelcol-llm
{{- end }}

{{- define "otelcol-llm.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "otelcol-llm.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Fails the render with a message naming the value at fault. */}}
{{- define "otelcol-llm.validate" -}}
{{- if not (has .Values.mode (list "agent" "gateway" "loadtest")) }}
{{- fail (printf "mode: %q is not supported; allowed values: agent, gateway, loadtest" (toString .Values.mode)) }}
{{- end }}
{{- if eq .Values.mode "loadtest" }}
{{- include "otelcol-llm.validateLoadtest" . }}
{{- end }}
{{- if not .Values.image.repository }}
{{- fail "image.repository must be set" }}
{{- end }}
{{- if and (eq .Values.mode "agent") (not .Values.agent.gatewayEndpoint) }}
{{- fail "agent.gatewayEndpoint must be set: the host:port of the gateway's OTLP/gRPC Service" }}
{{- end }}
{{- if and (eq .Values.mode "gateway") (not .Values.gateway.upstreamEndpoint) }}
{{- fail "gateway.upstreamEndpoint must be set: the host:port of the tracing backend's OTLP/gRPC receiver" }}
{{- end }}
{{- if or (le (float64 .Values.gomemlimitRatio) 0.0) (gt (float64 .Values.gomemlimitRatio) 1.0) }}
{{- fail (printf "gomemlimitRatio: %v must be in (0, 1]" .Values.gomemlimitRatio) }}
{{- end }}
{{- end }}

{{/*
The collector configuration: the mode's base pipeline (files/<mode>.yaml, the
same file as configs/<mode>.yaml) with .Values.config merged over it.
*/}}
{{- define "otelcol-llm.config" -}}
{{- $base := .Files.Get (printf "files/%s.yaml" .Values.mode) | fromYaml }}
{{- if hasKey $base "Error" }}
{{- fail (printf "files/%s.yaml: %s" .Values.mode (get $base "Error")) }}
{{- end }}
{{- if eq .Values.mode "loadtest" }}
{{- $_ := set $base.receivers "llm_loadgen" (mustMergeOverwrite (get $base.receivers "llm_loadgen") (deepCopy (.Values.loadtest.loadgen | default dict))) }}
{{- end }}
{{- toYaml (mustMergeOverwrite $base (deepCopy .Values.config)) }}
{{- end }}

{{/* Bytes in a Kubernetes memory quantity such as 1Gi, 512Mi or 1000000000. */}}
{{- define "otelcol-llm.memoryBytes" -}}
{{- $q := toString . }}
{{- $units := dict "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 }}
{{- $num := regexFind "^[0-9]+(\\.[0-9]+)?" $q }}
{{- $unit := trimPrefix $num $q }}
{{- if not $num }}
{{- fail (printf "resources.limits.memory: %q is not a memory quantity" $q) }}
{{- end }}
{{- if and $unit (not (hasKey $units $unit)) }}
{{- fail (printf "resources.limits.memory: unit %q of %q is not supported; use Ki, Mi, Gi, Ti, k, M, G or T" $unit $q) }}
{{- end }}
{{- if $unit }}{{ mulf $num (get $units $unit) | int64 }}{{ else }}{{ $num | float64 | int64 }}{{ end }}
{{- end }}

{{/* GOMEMLIMIT in MiB: gomemlimitRatio of the container's memory limit. */}}
{{- define "otelcol-llm.gomemlimit" -}}
{{- $bytes := include "otelcol-llm.memoryBytes" .Values.resources.limits.memory | float64 }}
{{- printf "%dMiB" (divf (mulf $bytes .Values.gomemlimitRatio) 1048576 | floor | int64) }}
{{- end }}

{{/*
Loadtest mode: the values every pod of the run shares must be set once, here;
the render fails naming the value otherwise.
*/}}
{{- define "otelcol-llm.validateLoadtest" -}}
{{- $lt := .Values.loadtest }}
{{- $id := toString ($lt.runId | default "") }}
{{- if not $id }}
{{- fail "loadtest.runId must be set: one id for every pod of the run, e.g. --set loadtest.runId=vllm-8b-$(date -u +%Y%m%d-%H%M%S)" }}
{{- end }}
{{- if not (regexMatch "^[A-Za-z0-9._-]{1,128}$" $id) }}
{{- fail (printf "loadtest.runId: %q may only hold letters, digits, '.', '_' and '-' (at most 128)" $id) }}
{{- end }}
{{- $at := toString ($lt.startAt | default "") }}
{{- if not $at }}
{{- fail "loadtest.startAt must be set: the RFC 3339 time at which every pod starts its part of the schedule, e.g. --set loadtest.startAt=$(date -u -d '+3 min' +%Y-%m-%dT%H:%M:%SZ)" }}
{{- end }}
{{- if not (regexMatch "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$" $at) }}
{{- fail (printf "loadtest.startAt: %q is not an RFC 3339 time such as 2026-11-29T21:00:00Z" $at) }}
{{- end }}
{{- if lt (int $lt.shards) 1 }}
{{- fail (printf "loadtest.shards: %v must be at least 1" $lt.shards) }}
{{- end }}
{{- if not $lt.gatewayEndpoint }}
{{- fail "loadtest.gatewayEndpoint must be set: the host:port of the gateway's OTLP/gRPC Service, whose load_report merges the shards" }}
{{- end }}
{{- end }}

{{/* The Job's name: one Job per run, so the run id is part of it. */}}
{{- define "otelcol-llm.loadtestJobName" -}}
{{- $id := regexReplaceAll "[^a-z0-9-]" (.Values.loadtest.runId | toString | lower) "-" }}
{{- printf "%s-%s" (include "otelcol-llm.fullname" .) $id | trunc 52 | trimSuffix "-" }}
{{- end }}
