{{/* The connection manager's environment: RabbitMQ and Redis (herald-lib), its node id and MQTT port, and
the crypto key, without which it cannot issue or check MQTT device passwords (it does not start). */}}
{{- define "connection-manager.env" -}}
{{ include "herald.backendEnv" . }}
- name: HERALD_CM_NODE_ID
  valueFrom: {fieldRef: {fieldPath: metadata.name}}
- name: HERALD_CM_MQTT_PORT
  value: "1883"
- name: HERALD_CRYPTO_KEY
  valueFrom: {secretKeyRef: {name: {{ .Values.appSecret.existingSecret }}, key: {{ .Values.appSecret.cryptoKeyKey }}}}
{{- end }}

{{- define "connection-manager.alerts" -}}
- alert: HeraldConnectionManagerDown
  expr: absent(up{namespace="{{ .Release.Namespace }}",service="{{ include "herald.fullname" . }}"} == 1)
  for: 5m
  labels: {severity: critical}
  annotations:
    summary: No connection manager is scraped
    description: Prometheus scrapes no ready connection-manager pod; MQTT devices cannot connect.
{{- with .Values.metrics.prometheusRule.extraRules }}
{{ toYaml . }}
{{- end }}
{{- end }}
