{{/*
The service's Deployment. Its environment comes from the including chart's "<chart>.env" template
(a YAML list of EnvVar, may be empty); the services' charts put "herald.backendEnv" in it.
*/}}
{{- define "herald.deployment" -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "herald.fullname" . }}
  labels:
    {{- include "herald.labels" . | nindent 4 }}
spec:
  {{- /* KEDA (gateway) owns the replica count when enabled: leaving it out keeps helm upgrade from resetting it. */}}
  {{- if not (and .Values.keda .Values.keda.enabled) }}
  replicas: {{ .Values.replicaCount }}
  {{- end }}
  revisionHistoryLimit: {{ .Values.revisionHistoryLimit }}
  selector:
    matchLabels:
      {{- include "herald.selectorLabels" . | nindent 6 }}
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: {{ .Values.rollingUpdate.maxSurge }}
      maxUnavailable: {{ .Values.rollingUpdate.maxUnavailable }}
  template:
    metadata:
      labels:
        {{- include "herald.selectorLabels" . | nindent 8 }}
        app.kubernetes.io/part-of: herald
        {{- with .Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        # Roll the pods when their non-secret configuration changes.
        checksum/config: {{ .Values.config | toJson | sha256sum }}
        {{- with .Values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "herald.serviceAccountName" . }}
      automountServiceAccountToken: {{ .Values.serviceAccount.automountToken }}
      {{- with .Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
      securityContext:
        {{- toYaml .Values.podSecurityContext | nindent 8 }}
      {{- if .Values.topologySpread.enabled }}
      topologySpreadConstraints:
        {{- range .Values.topologySpread.topologyKeys }}
        - maxSkew: {{ $.Values.topologySpread.maxSkew }}
          topologyKey: {{ . }}
          whenUnsatisfiable: {{ $.Values.topologySpread.whenUnsatisfiable }}
          labelSelector:
            matchLabels:
              {{- include "herald.selectorLabels" $ | nindent 14 }}
          matchLabelKeys: [pod-template-hash]
        {{- end }}
      {{- end }}
      containers:
        - name: {{ .Chart.Name }}
          image: {{ include "herald.image" . | quote }}
          imagePullPolicy: {{ .Values.image.pullPolicy }}
          securityContext:
            {{- toYaml .Values.securityContext | nindent 12 }}
          ports:
            {{- range .Values.containerPorts }}
            - name: {{ .name }}
              containerPort: {{ .port }}
              protocol: {{ default "TCP" .protocol }}
            {{- end }}
          env:
            - name: JAVA_TOOL_OPTIONS
              value: {{ .Values.javaToolOptions | quote }}
            {{- include (printf "%s.env" .Chart.Name) . | nindent 12 }}
            {{- with .Values.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          envFrom:
            - configMapRef:
                name: {{ include "herald.fullname" . }}
          startupProbe:
            httpGet: {path: /actuator/health/liveness, port: http}
            periodSeconds: {{ .Values.probes.startup.periodSeconds }}
            failureThreshold: {{ .Values.probes.startup.failureThreshold }}
          livenessProbe:
            httpGet: {path: /actuator/health/liveness, port: http}
            periodSeconds: {{ .Values.probes.liveness.periodSeconds }}
            timeoutSeconds: {{ .Values.probes.liveness.timeoutSeconds }}
            failureThreshold: {{ .Values.probes.liveness.failureThreshold }}
          readinessProbe:
            httpGet: {path: /actuator/health/readiness, port: http}
            periodSeconds: {{ .Values.probes.readiness.periodSeconds }}
            timeoutSeconds: {{ .Values.probes.readiness.timeoutSeconds }}
            failureThreshold: {{ .Values.probes.readiness.failureThreshold }}
          {{- /* The sleep action needs no shell or sleep binary in the image; older clusters go without. */}}
          {{- if and .Values.preStopSleepSeconds (semverCompare ">=1.30-0" .Capabilities.KubeVersion.Version) }}
          lifecycle:
            preStop:
              sleep: {seconds: {{ .Values.preStopSleepSeconds }}}
          {{- end }}
          resources:
            {{- toYaml .Values.resources | nindent 12 }}
          volumeMounts:
            # The root filesystem is read-only; the JVM and Netty need a writable temp dir.
            - name: tmp
              mountPath: /tmp
            {{- with .Values.extraVolumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: {{ .Values.tmpSizeLimit }}
        {{- with .Values.extraVolumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with .Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end }}

{{/* RabbitMQ and Redis from push-platform's Secrets: what every Herald service connects to. */}}
{{/* The credential key and the keys it replaced (optional: set during a key rotation, README "Rotating the credential key"). */}}
{{- define "herald.cryptoEnv" -}}
- name: HERALD_CRYPTO_KEY
  valueFrom: {secretKeyRef: {name: {{ .Values.appSecret.existingSecret }}, key: {{ .Values.appSecret.cryptoKeyKey }}}}
- name: HERALD_CRYPTO_PREVIOUS_KEYS
  valueFrom: {secretKeyRef: {name: {{ .Values.appSecret.existingSecret }}, key: {{ .Values.appSecret.cryptoPreviousKeysKey }}, optional: true}}
{{- end }}

{{- define "herald.backendEnv" -}}
- name: SPRING_RABBITMQ_HOST
  valueFrom: {secretKeyRef: {name: {{ .Values.rabbitmq.existingSecret }}, key: {{ .Values.rabbitmq.hostKey }}}}
- name: SPRING_RABBITMQ_PORT
  valueFrom: {secretKeyRef: {name: {{ .Values.rabbitmq.existingSecret }}, key: {{ .Values.rabbitmq.portKey }}}}
- name: SPRING_RABBITMQ_USERNAME
  valueFrom: {secretKeyRef: {name: {{ .Values.rabbitmq.existingSecret }}, key: {{ .Values.rabbitmq.usernameKey }}}}
- name: SPRING_RABBITMQ_PASSWORD
  valueFrom: {secretKeyRef: {name: {{ .Values.rabbitmq.existingSecret }}, key: {{ .Values.rabbitmq.passwordKey }}}}
- name: HERALD_REDIS_URI
  valueFrom: {secretKeyRef: {name: {{ .Values.redis.existingSecret }}, key: {{ .Values.redis.uriKey }}}}
{{- end }}
