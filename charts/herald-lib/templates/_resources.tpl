{{- define "herald.configmap" -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "herald.fullname" . }}
  labels:
    {{- include "herald.labels" . | nindent 4 }}
data:
  {{- range $k, $v := .Values.config }}
  {{ $k }}: {{ $v | toString | quote }}
  {{- end }}
{{- end }}

{{- define "herald.serviceaccount" -}}
{{- if .Values.serviceAccount.create }}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "herald.serviceAccountName" . }}
  labels:
    {{- include "herald.labels" . | nindent 4 }}
  {{- with .Values.serviceAccount.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
automountServiceAccountToken: {{ .Values.serviceAccount.automountToken }}
{{- end }}
{{- end }}

{{/* The service that Prometheus scrapes and that the helm test calls: the container's "http" port. */}}
{{- define "herald.service" -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "herald.fullname" . }}
  labels:
    {{- include "herald.labels" . | nindent 4 }}
  {{- with .Values.service.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  type: {{ .Values.service.type }}
  selector:
    {{- include "herald.selectorLabels" . | nindent 4 }}
  ports:
    - name: http
      port: {{ .Values.service.port }}
      targetPort: http
      protocol: TCP
{{- end }}

{{- define "herald.pdb" -}}
{{- if .Values.podDisruptionBudget.enabled }}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "herald.fullname" . }}
  labels:
    {{- include "herald.labels" . | nindent 4 }}
spec:
  {{- if .Values.podDisruptionBudget.minAvailable }}
  minAvailable: {{ .Values.podDisruptionBudget.minAvailable }}
  {{- else }}
  maxUnavailable: {{ .Values.podDisruptionBudget.maxUnavailable }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "herald.selectorLabels" . | nindent 6 }}
{{- end }}
{{- end }}

{{/*
Default-deny for the pods, then: ingress on the container ports (from .Values.networkPolicy.ingressFrom,
everyone when empty); egress to DNS, RabbitMQ and Redis, plus .Values.networkPolicy.extraEgress.
*/}}
{{- define "herald.networkpolicy" -}}
{{- if .Values.networkPolicy.enabled }}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "herald.fullname" . }}
  labels:
    {{- include "herald.labels" . | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "herald.selectorLabels" . | nindent 6 }}
  policyTypes: [Ingress, Egress]
  ingress:
    - ports:
        {{- range .Values.containerPorts }}
        - port: {{ .port }}
          protocol: {{ default "TCP" .protocol }}
        {{- end }}
      {{- with .Values.networkPolicy.ingressFrom }}
      from:
        {{- toYaml . | nindent 8 }}
      {{- end }}
  egress:
    - ports:
        - {port: 53, protocol: UDP}
        - {port: 53, protocol: TCP}
    - ports:
        - {port: {{ .Values.networkPolicy.rabbitmqPort }}, protocol: TCP}
        - {port: {{ .Values.networkPolicy.redisPort }}, protocol: TCP}
      {{- with .Values.networkPolicy.backendsFrom }}
      to:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- with .Values.networkPolicy.extraEgress }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end }}
{{- end }}

{{/* Rendered only where the cluster serves the prometheus-operator API (kube-prometheus-stack). */}}
{{- define "herald.servicemonitor" -}}
{{- if and .Values.metrics.serviceMonitor.enabled (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1") }}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "herald.fullname" . }}
  labels:
    {{- include "herald.labels" . | nindent 4 }}
    {{- with .Values.metrics.serviceMonitor.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "herald.selectorLabels" . | nindent 6 }}
  namespaceSelector:
    matchNames: [{{ .Release.Namespace }}]
  endpoints:
    - port: http
      path: /actuator/prometheus
      # Keep the services' own `service` tag (dispatcher, gateway, ...) that dashboards and alerts select on.
      honorLabels: true
      interval: {{ .Values.metrics.serviceMonitor.interval }}
      scrapeTimeout: {{ .Values.metrics.serviceMonitor.scrapeTimeout }}
{{- end }}
{{- end }}

{{/* Alert rules come from the including chart's "<chart>.alerts" template (a YAML list of rules). */}}
{{- define "herald.prometheusrule" -}}
{{- if and .Values.metrics.prometheusRule.enabled (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1") }}
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: {{ include "herald.fullname" . }}
  labels:
    {{- include "herald.labels" . | nindent 4 }}
    {{- with .Values.metrics.prometheusRule.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  groups:
    - name: {{ include "herald.fullname" . }}
      rules:
        {{- include (printf "%s.alerts" .Chart.Name) . | nindent 8 }}
{{- end }}
{{- end }}

{{/*
helm test: a pod that asks the service for its readiness (RabbitMQ and Redis reachable). It carries
the labels the NetworkPolicy's ingressFrom may select (.Values.tests.podLabels), and is scheduled as
the service's pods are (nodeSelector, affinity, tolerations): where those pick the nodes that run
containers (ci/node-values.yaml), a test pod elsewhere would not really run.
*/}}
{{- define "herald.testpod" -}}
apiVersion: v1
kind: Pod
metadata:
  name: {{ include "herald.fullname" . }}-test-readiness
  labels:
    {{- include "herald.labels" . | nindent 4 }}
    app.kubernetes.io/component: test
    {{- with .Values.tests.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    helm.sh/hook: test
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
spec:
  restartPolicy: Never
  automountServiceAccountToken: false
  securityContext:
    runAsNonRoot: true
    runAsUser: 65532
    runAsGroup: 65532
    seccompProfile: {type: RuntimeDefault}
  containers:
    - name: readiness
      image: {{ .Values.tests.image | quote }}
      # `timeout`, not wget's -T: Debian's busybox 1.35 (the test node's image) crashes on -T.
      command: [timeout, "10", wget, -q, -O-, "http://{{ include "herald.fullname" . }}:{{ .Values.service.port }}/actuator/health/readiness"]
      securityContext:
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        capabilities: {drop: [ALL]}
      resources:
        requests: {cpu: 10m, memory: 16Mi}
        limits: {memory: 32Mi}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
