{{- define "folio.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "folio.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "folio.labels" -}}
{{ include "folio.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "folio.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/* The Secret the pods read tokens and keys from: the operator's, or the chart's. */}}
{{- define "folio.secretName" -}}
{{- .Values.secret.existingSecret | default (printf "%s-secrets" (include "folio.fullname" .)) -}}
{{- end -}}

{{/* Refuse values that would deploy something broken, with the value to change. */}}
{{- define "folio.checks" -}}
{{- if le (int .Values.terminationGracePeriodSeconds) 30 -}}
{{- fail "terminationGracePeriodSeconds must be above 30: Folio lets running turns finish for up to 30 s after SIGTERM" -}}
{{- end -}}
{{- if and .Values.index.enabled (not .Values.index.documents.existingClaim) -}}
{{- fail "index.enabled needs index.documents.existingClaim: the PersistentVolumeClaim holding the documents" -}}
{{- end -}}
{{- if and .Values.sync.enabled (not .Values.sync.sources) -}}
{{- fail "sync.enabled needs sync.sources: the sources file (docs/sources.md)" -}}
{{- end -}}
{{- if and .Values.data.persistence.enabled (has "ReadWriteMany" .Values.data.persistence.accessModes) (not (hasKey .Values.settings "AZURE_SEARCH_ENDPOINT")) (not .Values.data.persistence.allowSharedSQLite) -}}
{{- fail "data.persistence.accessModes ReadWriteMany with the local index puts SQLite on a shared (NFS) volume, where its locks are unsafe: use ReadWriteOnce (serve and sync on one node), or Azure AI Search (settings.AZURE_SEARCH_ENDPOINT) for several nodes" -}}
{{- end -}}
{{- if not (has .Values.slack.mode (list "http" "socket")) -}}
{{- fail "slack.mode must be http or socket" -}}
{{- end -}}
{{- if and .Values.redis.auth.password (not (regexMatch "^[A-Za-z0-9._~-]+$" (toString .Values.redis.auth.password))) -}}
{{- fail "redis.auth.password may hold only letters, digits and - _ . ~ (it is part of Folio's REDIS_URL)" -}}
{{- end -}}
{{- if and (not .Values.redis.bundled) (not .Values.secret.existingSecret) (not (hasKey .Values.secret.values "REDIS_URL")) -}}
{{- fail "redis.bundled is false: put REDIS_URL (redis://:PASSWORD@HOST:6379/0) in secret.values or in secret.existingSecret" -}}
{{- end -}}
{{- end -}}

{{/* The environment every Folio container gets: settings, the Secret, and the bundled Redis's URL. */}}
{{- define "folio.env" -}}
envFrom:
  - configMapRef:
      name: {{ include "folio.fullname" . }}-settings
  - secretRef:
      name: {{ include "folio.secretName" . }}
{{- if .Values.redis.bundled }}
env:
  {{- include "folio.redisPasswordEnv" (list . "REDIS_PASSWORD") | nindent 2 }}
  - name: REDIS_URL  # Kubernetes expands $(REDIS_PASSWORD), defined above: the password stays in its Secret
    value: redis://:$(REDIS_PASSWORD)@{{ include "folio.fullname" . }}-redis:6379/0
{{- end }}
{{- end -}}

{{/* The local index is one SQLite file on a ReadWriteOnce volume: every pod that mounts it (serve replicas, the
     syncer, the index Job) runs on the node of the first, so SQLite's locks work (they do not over NFS). With Azure
     AI Search (settings.AZURE_SEARCH_ENDPOINT) or another access mode, pods spread as the scheduler likes. */}}
{{- define "folio.colocated" -}}
{{- if and .Values.data.persistence.enabled (has "ReadWriteOnce" .Values.data.persistence.accessModes) (not (hasKey .Values.settings "AZURE_SEARCH_ENDPOINT")) }}
affinity:
  podAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchLabels:
            {{- include "folio.selectorLabels" . | nindent 12 }}
            app.kubernetes.io/component: serve
        topologyKey: kubernetes.io/hostname
{{- else }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
{{- end -}}

{{- define "folio.dataVolume" -}}
- name: data
{{- if .Values.data.persistence.enabled }}
  persistentVolumeClaim:
    claimName: {{ .Values.data.persistence.existingClaim | default (printf "%s-data" (include "folio.fullname" .)) }}
{{- else }}
  emptyDir: {}
{{- end }}
{{- end -}}

{{/* The bundled Redis's password: the operator's Secret, or the chart's. */}}
{{- define "folio.redisSecretName" -}}
{{- .Values.redis.auth.existingSecret | default (printf "%s-redis" (include "folio.fullname" .)) -}}
{{- end -}}

{{- define "folio.redisSecretKey" -}}
{{- if .Values.redis.auth.existingSecret -}}
{{- .Values.redis.auth.existingSecretKey -}}
{{- else -}}
redis-password
{{- end -}}
{{- end -}}

{{/* An env entry (list $ NAME) reading the bundled Redis's password from its Secret. */}}
{{- define "folio.redisPasswordEnv" -}}
{{- $root := index . 0 -}}
- name: {{ index . 1 }}
  valueFrom:
    secretKeyRef:
      name: {{ include "folio.redisSecretName" $root }}
      key: {{ include "folio.redisSecretKey" $root }}
{{- end -}}
