{{/* The dispatcher's environment: RabbitMQ and Redis (herald-lib), the crypto key and the admin token. */}}
{{- define "dispatcher.env" -}}
{{ include "herald.backendEnv" . }}
{{ include "herald.cryptoEnv" . }}
- name: HERALD_DISPATCHER_ADMIN_TOKEN
  valueFrom: {secretKeyRef: {name: {{ .Values.appSecret.existingSecret }}, key: {{ .Values.appSecret.adminTokenKey }}}}
{{- end }}

{{/* Alert rules on the dispatcher's own metrics (README, "Metrics and health"). */}}
{{- define "dispatcher.alerts" -}}
{{- /* A failed send is answered 503, so it is not among the accepted (202) ones: the share is of both. */ -}}
{{- $sel := printf "namespace=\"%s\",service=\"dispatcher\"" .Release.Namespace -}}
- alert: HeraldDispatcherPublishFailures
  expr: |
    sum(rate(herald_dispatcher_publish_failures_total{ {{- $sel -}} }[5m]))
      / clamp_min(sum(rate(herald_dispatcher_accepted_total{ {{- $sel -}} }[5m])) + sum(rate(herald_dispatcher_publish_failures_total{ {{- $sel -}} }[5m])), 1e-9)
      > {{ .Values.metrics.prometheusRule.publishFailureRatio }}
  for: 5m
  labels: {severity: critical}
  annotations:
    summary: Dispatcher cannot queue pushes
    description: More than {{ mulf .Values.metrics.prometheusRule.publishFailureRatio 100 }}% of sends failed to reach RabbitMQ over 5 minutes (clients get 503).
- alert: HeraldDispatcherSlowPublish
  expr: |
    histogram_quantile(0.99, sum by (le) (rate(herald_dispatcher_publish_latency_seconds_bucket{ {{- $sel -}} }[5m])))
      > {{ .Values.metrics.prometheusRule.publishLatencyP99Seconds }}
  for: 10m
  labels: {severity: warning}
  annotations:
    summary: RabbitMQ confirms are slow
    description: p99 time from publish to RabbitMQ's confirm is above {{ .Values.metrics.prometheusRule.publishLatencyP99Seconds }} s.
- alert: HeraldDispatcherDown
  expr: absent(up{namespace="{{ .Release.Namespace }}",service="{{ include "herald.fullname" . }}"} == 1)
  for: 5m
  labels: {severity: critical}
  annotations:
    summary: No dispatcher is scraped
    description: Prometheus scrapes no ready dispatcher pod; the API is down.
{{- end }}
