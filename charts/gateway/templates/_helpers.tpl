{{/* The gateway's environment: RabbitMQ and Redis (herald-lib), the crypto key. */}}
{{- define "gateway.env" -}}
{{ include "herald.backendEnv" . }}
{{ include "herald.cryptoEnv" . }}
{{- end }}

{{/* Alert rules on the gateway's own metrics (README, "Metrics and health"). */}}
{{- define "gateway.alerts" -}}
{{- /* A provider's sent counter appears with its first success: pods whose every target fails have none. */ -}}
{{- $sel := printf "namespace=\"%s\",service=\"gateway\"" .Release.Namespace -}}
- alert: HeraldGatewayFailureRatio
  expr: |
    sum(rate(herald_gateway_failed_total{ {{- $sel -}} }[15m]))
      / clamp_min((sum(rate(herald_gateway_sent_total{ {{- $sel -}} }[15m])) or vector(0)) + sum(rate(herald_gateway_failed_total{ {{- $sel -}} }[15m])), 1e-9)
      > {{ .Values.metrics.prometheusRule.failureRatio }}
  for: 15m
  labels: {severity: warning}
  annotations:
    summary: Many pushes fail
    description: More than {{ mulf .Values.metrics.prometheusRule.failureRatio 100 }}% of targets failed over 15 minutes; see the errors-by-reason dashboard.
- alert: HeraldGatewayDeadLetters
  expr: sum(rate(herald_gateway_dead_lettered_total{ {{- $sel -}} }[15m])) > {{ .Values.metrics.prometheusRule.deadLetterRate }}
  for: 15m
  labels: {severity: warning}
  annotations:
    summary: Pushes are dead-lettered
    description: Targets go to herald.dead after exhausting their retries (provider outage or quota).
- alert: HeraldGatewaySlowDelivery
  expr: |
    histogram_quantile(0.99, sum by (le) (rate(herald_gateway_accept_to_provider_seconds_bucket{ {{- $sel -}} }[10m])))
      > {{ .Values.metrics.prometheusRule.acceptToProviderP99Seconds }}
  for: 10m
  labels: {severity: warning}
  annotations:
    summary: Pushes reach providers late
    description: p99 from API accept to provider acceptance is above {{ .Values.metrics.prometheusRule.acceptToProviderP99Seconds }} s (backlog; check queue depth and replicas).
- alert: HeraldGatewayDown
  expr: absent(up{namespace="{{ .Release.Namespace }}",service="{{ include "herald.fullname" . }}"} == 1)
  for: 5m
  labels: {severity: critical}
  annotations:
    summary: No gateway is scraped
    description: Prometheus scrapes no ready gateway pod; nothing is delivered.
{{- end }}

{{- define "gateway.providerEgress" -}}
{{- if .Values.networkPolicy.providerEgress.enabled }}
- to:
    - ipBlock:
        cidr: {{ .Values.networkPolicy.providerEgress.cidr }}
        {{- with .Values.networkPolicy.providerEgress.except }}
        except:
          {{- toYaml . | nindent 10 }}
        {{- end }}
  ports:
    {{- range .Values.networkPolicy.providerEgress.ports }}
    - {port: {{ . }}, protocol: TCP}
    {{- end }}
{{- end }}
{{- end }}
