{{- define "sendonce.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "sendonce.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "sendonce.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "sendonce.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The environment every sendonce container shares: secrets by reference, then plain settings. */}}
{{- define "sendonce.env" -}}
- name: SENDONCE_DATABASE_URL
  valueFrom:
    secretKeyRef: { name: {{ .Values.secrets.databaseUrl.name | quote }}, key: {{ .Values.secrets.databaseUrl.key | quote }} }
{{- with .Values.secrets.directDatabaseUrl }}{{ if .name }}
- name: SENDONCE_DIRECT_DATABASE_URL
  valueFrom:
    secretKeyRef: { name: {{ .name | quote }}, key: {{ .key | quote }} }
{{- end }}{{ end }}
- name: SENDONCE_UNSUBSCRIBE_SECRET
  valueFrom:
    secretKeyRef: { name: {{ .Values.secrets.unsubscribeSecret.name | quote }}, key: {{ .Values.secrets.unsubscribeSecret.key | quote }} }
{{- with .Values.secrets.secretsKey }}{{ if .name }}
- name: SENDONCE_SECRETS_KEY
  valueFrom:
    secretKeyRef: { name: {{ .name | quote }}, key: {{ .key | quote }} }
{{- end }}{{ end }}
{{- with .Values.secrets.smtpPassword }}{{ if .name }}
- name: SENDONCE_SMTP_PASSWORD
  valueFrom:
    secretKeyRef: { name: {{ .name | quote }}, key: {{ .key | quote }} }
{{- end }}{{ end }}
- name: SENDONCE_SHUTDOWN_TIMEOUT
  value: {{ printf "%ds" (int .Values.shutdownTimeoutSeconds) | quote }}
{{- range $k, $v := .Values.env }}
- name: {{ $k }}
  value: {{ $v | toString | quote }}
{{- end }}
{{- end -}}

{{- define "sendonce.grace" -}}
{{ add (int .Values.shutdownTimeoutSeconds) (int .Values.graceMarginSeconds) }}
{{- end -}}
