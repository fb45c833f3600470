{{/*
Labels every object of the release carries beside its own: which chart and
release made it. The objects' own labels and selectors are those of the
kustomize base, so that both install the same objects.
*/}}
{{- define "ingress-xds.releaseLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* image renders an image reference from a map with repository and tag. */}}
{{- define "ingress-xds.image" -}}
{{ .repository }}:{{ .tag }}
{{- end }}

{{/* ingressClass is the value of --ingress-class. */}}
{{- define "ingress-xds.ingressClass" -}}
{{ .Values.controller.ingressClass | default .Values.controller.ingressClassResource.name }}
{{- end }}

{{/* The kinds the chart knows for controller.kind. */}}
{{- define "ingress-xds.checkKind" -}}
{{- if not (has .Values.controller.kind (list "DaemonSet" "Deployment")) }}
{{- fail (printf "controller.kind must be DaemonSet or Deployment, not %q" .Values.controller.kind) }}
{{- end }}
{{- if and (hasKey .Values.controller.hostPort "enabled") (ne (toString .Values.controller.hostPort.enabled) (toString (eq .Values.controller.kind "DaemonSet"))) }}
{{- fail "controller.hostPort.enabled follows controller.kind here: host ports with DaemonSet, a Service with Deployment" }}
{{- end }}
{{- end }}

{{/*
ingress-nginx's flags of its request metrics, which its chart takes in
controller.extraArgs: here the authz container beside each Envoy counts
the metrics, so they go to it, not to serve.
*/}}
{{- define "ingress-xds.requestMetricsFlags" -}}
metrics-per-host,metrics-per-undefined-host,report-status-classes,exclude-socket-metrics,time-buckets,length-buckets,size-buckets
{{- end }}
