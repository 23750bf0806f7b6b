{{- define "push-platform.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: herald
{{- end }}

{{- define "push-platform.clusterRef" -}}
rabbitmqClusterReference:
  name: {{ .Values.rabbitmq.name }}
{{- end }}

{{/*
A secret value that must stay stable: the one given in values, else the one already in the
cluster's Secret (upgrades, rollbacks), else a new random one. Arguments: (list $ secretName key given generated).
*/}}
{{- define "push-platform.stableSecret" -}}
{{- $ctx := index . 0 }}{{ $name := index . 1 }}{{ $key := index . 2 }}{{ $given := index . 3 }}{{ $generated := index . 4 }}
{{- if $given }}
{{- $given }}
{{- else }}
{{- $existing := lookup "v1" "Secret" $ctx.Release.Namespace $name }}
{{- if and $existing $existing.data (hasKey $existing.data $key) }}
{{- index $existing.data $key | b64dec }}
{{- else }}
{{- $generated }}
{{- end }}
{{- end }}
{{- end }}

{{- define "push-platform.rabbitHost" -}}
{{ .Values.rabbitmq.name }}.{{ .Release.Namespace }}.svc
{{- end }}
