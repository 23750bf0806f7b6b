{{/* The sandbox's environment: probes, the token URI the demo service account names, the Web Push endpoints' origin, its APNs key. */}}
{{- define "provider-sandbox.env" -}}
- name: MANAGEMENT_ENDPOINT_HEALTH_PROBES_ENABLED
  value: "true"
- name: HERALD_SANDBOX_TOKEN_URI
  value: {{ printf "http://%s:%d/token" (include "herald.fullname" .) (int .Values.service.port) | quote }}
- name: HERALD_SANDBOX_WEBPUSH_ORIGIN
  value: {{ printf "http://%s:%d" (include "herald.fullname" .) (int .Values.service.port) | quote }}
- name: HERALD_SANDBOX_APNS_CERTIFICATE_PATH
  value: /etc/herald/apns-tls/tls.crt
- name: HERALD_SANDBOX_APNS_PRIVATE_KEY_PATH
  value: /etc/herald/apns-tls/tls.key
{{- end }}

{{- define "provider-sandbox.tlsSecret" -}}
{{ include "herald.fullname" . }}-apns-tls
{{- end }}
