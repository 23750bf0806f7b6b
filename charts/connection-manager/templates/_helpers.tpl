{{/* The connection manager's environment: RabbitMQ and Redis (herald-lib), its node id and MQTT port, and
the crypto key, without which it cannot issue or check MQTT device passwords (it does not start). */}}
{{- define "connection-manager.env" -}}
{{ include "herald.backendEnv" . }}
- name: HERALD_CM_NODE_ID
  valueFrom: {fieldRef: {fieldPath: metadata.name}}
- name: HERALD_CM_MQTT_PORT
  value: "1883"
{{- if not .Values.mqtt.plain }}
- name: HERALD_CM_MQTT_PLAIN
  value: "false"
{{- end }}
{{- if .Values.mqtt.tls.enabled }}
- name: HERALD_CM_MQTT_TLS_ENABLED
  value: "true"
{{- end }}
{{- if .Values.mqtt.websocket.enabled }}
- name: HERALD_CM_MQTT_WEBSOCKET_ENABLED
  value: "true"
{{- end }}
{{ include "herald.cryptoEnv" . }}
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

{{/* The MQTT listeners the values turn on: [{name, port, servicePort}], in the order the Services list them.
The container ports are the connection manager's defaults (herald.cm.mqtt.*), which the chart leaves as they are. */}}
{{- define "connection-manager.listeners" -}}
{{- $mqtt := .Values.mqtt }}
{{- if not (or $mqtt.plain $mqtt.tls.enabled) }}
{{- fail "mqtt.plain=false needs mqtt.tls.enabled=true: devices would have no listener" }}
{{- end }}
{{- if $mqtt.plain }}
- {name: mqtt, port: 1883, servicePort: {{ .Values.mqttService.port }}}
{{- end }}
{{- if $mqtt.tls.enabled }}
- {name: mqtts, port: 8883, servicePort: {{ .Values.mqttService.tlsPort }}}
{{- end }}
{{- if and $mqtt.websocket.enabled $mqtt.plain }}
- {name: ws, port: 8083, servicePort: {{ .Values.mqttService.websocketPort }}}
{{- end }}
{{- if and $mqtt.websocket.enabled $mqtt.tls.enabled }}
- {name: wss, port: 8084, servicePort: {{ .Values.mqttService.websocketTlsPort }}}
{{- end }}
{{- end }}

{{/* The chart's context for the library's Deployment and NetworkPolicy, put in .out.context: the values
with the container ports of the listeners turned on (the NetworkPolicy admits exactly those) and the TLS
Secret mounted where herald.cm.mqtt.tls.certificate-dir expects it. Called with (dict "root" $ "out" (dict)). */}}
{{- define "connection-manager.context" -}}
{{- $root := .root }}
{{- $values := deepCopy $root.Values }}
{{- $ports := list }}
{{- range (include "connection-manager.listeners" $root | fromYamlArray) }}
{{- $ports = append $ports (dict "name" .name "port" (.port | int)) }}
{{- end }}
{{- range $root.Values.containerPorts }}
{{- if ne .name "mqtt" }}
{{- $ports = append $ports . }}
{{- end }}
{{- end }}
{{- $_ := set $values "containerPorts" $ports }}
{{- if $root.Values.mqtt.tls.enabled }}
{{- $secret := required "mqtt.tls.secretName is required when mqtt.tls.enabled" $root.Values.mqtt.tls.secretName }}
{{- $_ := set $values "extraVolumes" (append $values.extraVolumes (dict "name" "mqtt-tls" "secret" (dict "secretName" $secret))) }}
{{- $_ := set $values "extraVolumeMounts" (append $values.extraVolumeMounts (dict "name" "mqtt-tls" "mountPath" "/etc/herald/mqtt-tls" "readOnly" true)) }}
{{- end }}
{{- $_ := set .out "context" (dict "Values" $values "Chart" $root.Chart "Release" $root.Release "Capabilities" $root.Capabilities "Template" $root.Template "Files" $root.Files) }}
{{- end }}
