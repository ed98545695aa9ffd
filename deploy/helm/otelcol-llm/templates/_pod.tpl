{{/* The pod spec shared by the agent DaemonSet and the gateway Deployment. */}}
{{- define "otelcol-llm.podTemplate" -}}
{{- $agent := eq .Values.mode "agent" -}}
metadata:
  labels:
    {{- include "otelcol-llm.selectorLabels" . | nindent 4 }}
    {{- with .Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    # Roll the pods when the collector configuration changes.
    checksum/config: {{ include "otelcol-llm.config" . | sha256sum }}
    {{- with .Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ include "otelcol-llm.serviceAccountName" . }}
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.priorityClassName }}
  priorityClassName: {{ . }}
  {{- end }}
  {{- if and $agent .Values.agent.runtimeClassName }}
  runtimeClassName: {{ .Values.agent.runtimeClassName }}
  {{- end }}
  {{- if $agent }}
  hostPID: {{ .Values.agent.hostPID }}
  {{- end }}
  securityContext:
    {{- if $agent }}
    # The agent reads root-owned node logs and /proc; it runs as root with
    # every capability dropped and a read-only root filesystem.
    runAsNonRoot: false
    runAsUser: 0
    runAsGroup: 0
    seccompProfile:
      type: RuntimeDefault
    {{- else }}
    {{- toYaml .Values.podSecurityContext | nindent 4 }}
    {{- end }}
  containers:
    - name: otelcol-llm
      image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      args:
        - --config=/etc/otelcol-llm/config.yaml
      securityContext:
        {{- toYaml .Values.securityContext | nindent 8 }}
      env:
        - name: MY_POD_IP
          valueFrom:
            fieldRef:
              fieldPath: status.podIP
        - name: K8S_NODE_NAME
          valueFrom:
            fieldRef:
              fieldPath: spec.nodeName
        - name: K8S_POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
        - name: K8S_NAMESPACE
          valueFrom:
            fieldRef:
              fieldPath: metadata.namespace
        # Every listener of the base pipelines binds to the pod IP.
        - name: OTELCOL_LLM_LISTEN_HOST
          value: $(MY_POD_IP)
        {{- range $name, $port := .Values.ports }}
        {{- $var := get (dict "otlp-grpc" "OTELCOL_LLM_OTLP_GRPC_PORT" "otlp-http" "OTELCOL_LLM_OTLP_HTTP_PORT" "metrics" "OTELCOL_LLM_METRICS_PORT" "genai-metrics" "OTELCOL_LLM_PROM_PORT" "health" "OTELCOL_LLM_HEALTH_PORT") $name }}
        {{- if $var }}
        - name: {{ $var }}
          value: {{ $port.containerPort | quote }}
        {{- end }}
        {{- end }}
        - name: GOMEMLIMIT
          value: {{ include "otelcol-llm.gomemlimit" . | quote }}
        {{- if $agent }}
        - name: NVIDIA_VISIBLE_DEVICES
          value: {{ .Values.agent.nvidiaVisibleDevices | quote }}
        - name: NVIDIA_DRIVER_CAPABILITIES
          value: {{ .Values.agent.nvidiaDriverCapabilities | quote }}
        - name: OTELCOL_LLM_GATEWAY_ENDPOINT
          value: {{ .Values.agent.gatewayEndpoint | quote }}
        - name: OTELCOL_LLM_INFERENCE_LOG_INCLUDE
          value: {{ .Values.agent.inferenceLogs.include | quote }}
        - name: OTELCOL_LLM_INFERENCE_LOG_PRESET
          value: {{ .Values.agent.inferenceLogs.preset | quote }}
        - name: OTELCOL_LLM_STORAGE_DIR
          value: /var/lib/otelcol-llm
        {{- else }}
        - name: OTELCOL_LLM_UPSTREAM_ENDPOINT
          value: {{ .Values.gateway.upstreamEndpoint | quote }}
        - name: OTELCOL_LLM_STORAGE_DIR
          value: /var/lib/otelcol-llm
        {{- end }}
        {{- range $k, $v := .Values.env }}
        - name: {{ $k }}
          value: {{ $v | quote }}
        {{- end }}
        {{- with .Values.extraEnv }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      ports:
        {{- range $name, $port := .Values.ports }}
        - name: {{ $name }}
          containerPort: {{ $port.containerPort }}
          protocol: {{ $port.protocol | default "TCP" }}
        {{- end }}
      livenessProbe:
        httpGet:
          path: /
          port: health
        initialDelaySeconds: {{ .Values.livenessProbe.initialDelaySeconds }}
        periodSeconds: {{ .Values.livenessProbe.periodSeconds }}
      readinessProbe:
        httpGet:
          path: /
          port: health
        initialDelaySeconds: {{ .Values.readinessProbe.initialDelaySeconds }}
        periodSeconds: {{ .Values.readinessProbe.periodSeconds }}
      resources:
        {{- toYaml .Values.resources | nindent 8 }}
      volumeMounts:
        - name: config
          mountPath: /etc/otelcol-llm
          readOnly: true
        - name: storage
          mountPath: /var/lib/otelcol-llm
        {{- if $agent }}
        {{- range $i, $p := .Values.agent.logPaths }}
        - name: logs-{{ $i }}
          mountPath: {{ $p }}
          readOnly: true
        {{- end }}
        {{- if .Values.agent.podResources.enabled }}
        - name: pod-resources
          mountPath: {{ .Values.agent.podResources.path }}
          readOnly: true
        {{- end }}
        {{- end }}
  volumes:
    - name: config
      configMap:
        name: {{ include "otelcol-llm.fullname" . }}
    {{- if $agent }}
    # Checkpoints of the tailed logs survive agent restarts on the node.
    - name: storage
      hostPath:
        path: /var/lib/otelcol-llm/{{ .Release.Name }}
        type: DirectoryOrCreate
    {{- range $i, $p := .Values.agent.logPaths }}
    - name: logs-{{ $i }}
      hostPath:
        path: {{ $p }}
        type: DirectoryOrCreate
    {{- end }}
    {{- if .Values.agent.podResources.enabled }}
    - name: pod-resources
      hostPath:
        path: {{ .Values.agent.podResources.path }}
        type: Directory
    {{- end }}
    {{- else }}
    - name: storage
      {{- toYaml .Values.gateway.queueVolume | nindent 6 }}
    {{- end }}
  {{- $nodeSelector := .Values.nodeSelector }}
  {{- if $agent }}{{ $nodeSelector = merge (deepCopy .Values.agent.nodeSelector) .Values.nodeSelector }}{{ end }}
  {{- with $nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- $tolerations := .Values.tolerations }}
  {{- if and $agent .Values.agent.tolerateGPUTaint }}
  {{- $tolerations = append $tolerations (dict "key" "nvidia.com/gpu" "operator" "Exists" "effect" "NoSchedule") }}
  {{- end }}
  {{- with $tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
