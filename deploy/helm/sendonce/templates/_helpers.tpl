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

{{/* The environment every sendonce container shares: secrets by reference, then plain settings.
     The two Secrets every process needs fail the render when unnamed (values.schema.json refuses them first;
     `required` still holds when schema validation is skipped) instead of rendering secretKeyRef name "". */}}
{{- define "sendonce.env" -}}
- name: SENDONCE_DATABASE_URL
  valueFrom:
    secretKeyRef: { name: {{ required "secrets.databaseUrl.name: name the Secret that holds SENDONCE_DATABASE_URL" .Values.secrets.databaseUrl.name | quote }}, key: {{ required "secrets.databaseUrl.key: the key of SENDONCE_DATABASE_URL in its Secret" .Values.secrets.databaseUrl.key | quote }} }
{{- with .Values.secrets.directDatabaseUrl }}{{ if .name }}
- name: SENDONCE_DIRECT_DATABASE_URL
  valueFrom:
    secretKeyRef: { name: {{ .name | quote }}, key: {{ required "an optional Secret that is named needs its key" .key | quote }} }
{{- end }}{{ end }}
- name: SENDONCE_UNSUBSCRIBE_SECRET
  valueFrom:
    secretKeyRef: { name: {{ required "secrets.unsubscribeSecret.name: name the Secret that holds SENDONCE_UNSUBSCRIBE_SECRET" .Values.secrets.unsubscribeSecret.name | quote }}, key: {{ required "secrets.unsubscribeSecret.key: the key of SENDONCE_UNSUBSCRIBE_SECRET in its Secret" .Values.secrets.unsubscribeSecret.key | quote }} }
{{- with .Values.secrets.secretsKey }}{{ if .name }}
- name: SENDONCE_SECRETS_KEY
  valueFrom:
    secretKeyRef: { name: {{ .name | quote }}, key: {{ required "an optional Secret that is named needs its key" .key | quote }} }
{{- end }}{{ end }}
{{- with .Values.secrets.smtpPassword }}{{ if .name }}
- name: SENDONCE_SMTP_PASSWORD
  valueFrom:
    secretKeyRef: { name: {{ .name | quote }}, key: {{ required "an optional Secret that is named needs its key" .key | quote }} }
{{- end }}{{ end }}
{{- with .Values.secrets.messageIdKey }}{{ if .name }}
- name: SENDONCE_MESSAGE_ID_KEY
  valueFrom:
    secretKeyRef: { name: {{ .name | quote }}, key: {{ required "an optional Secret that is named needs its key" .key | quote }} }
{{- end }}{{ end }}
{{- with .Values.secrets.httpProviderAuth }}{{ if .name }}
- name: SENDONCE_HTTP_PROVIDER_AUTH
  valueFrom:
    secretKeyRef: { name: {{ .name | quote }}, key: {{ required "an optional Secret that is named needs its key" .key | quote }} }
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
