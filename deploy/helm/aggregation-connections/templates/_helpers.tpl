{{/* The release's full name: <release>-aggregation-connections, or the release alone when it already says so. */}}
{{- define "ac.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "ac.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component: worker, console or pipeline-entry. */}}
{{- define "ac.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "ac.serviceAccountName" -}}
{{- default (include "ac.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{/* The image of a tag (the current build's by default): repository@digest, else repository:tag. */}}
{{- define "ac.image" -}}
{{- $image := .root.Values.image -}}
{{- if and (not .tag) $image.digest -}}
{{- printf "%s@%s" $image.repository $image.digest -}}
{{- else -}}
{{- printf "%s:%s" $image.repository (default (default .root.Chart.AppVersion $image.tag) .tag) -}}
{{- end -}}
{{- end -}}

{{/* The current build's id: image.buildId, else the tag with each character a build id may not hold (WORKER_BUILD_ID: letters, digits, - and _) as a dash. */}}
{{- define "ac.buildId" -}}
{{- default (regexReplaceAll "[^A-Za-z0-9_-]" (default .Chart.AppVersion .Values.image.tag) "-") .Values.image.buildId -}}
{{- end -}}

{{/* A build id as a name part: lower case, underscores as dashes, at most 20 characters. */}}
{{- define "ac.buildName" -}}
{{- . | lower | replace "_" "-" | trunc 20 | trimSuffix "-" -}}
{{- end -}}

{{/* The variables one process reads (files/variables.yaml, generated from the settings schemas). */}}
{{- define "ac.reads" -}}
{{- $variables := .root.Files.Get "files/variables.yaml" | fromYaml -}}
{{- get $variables .process | toYaml -}}
{{- end -}}

{{/*
The non-secret settings of one process: `config` with the process's own config over it, the
variables it does not read and the empty ones left out. One YAML map, for its ConfigMap.
*/}}
{{- define "ac.configData" -}}
{{- $reads := include "ac.reads" . | fromYamlArray -}}
{{- $merged := merge (deepCopy (default dict .own)) (deepCopy .root.Values.config) -}}
{{- $data := dict -}}
{{- range $name, $value := $merged -}}
{{- if and (has $name $reads) (ne (toString $value) "") -}}
{{- $_ := set $data $name (toString $value) -}}
{{- end -}}
{{- end -}}
{{- toYaml $data -}}
{{- end -}}

{{/* The secret variables one process reads, each from its Secret's key. */}}
{{- define "ac.secretEnv" -}}
{{- $reads := include "ac.reads" . | fromYamlArray -}}
{{- range $name, $ref := .root.Values.secretEnv }}
{{- if has $name $reads }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $ref.name }}
      key: {{ $ref.key }}
{{- end }}
{{- end }}
{{- end -}}

{{/* Volumes of one pod: /tmp (the root filesystem is read-only) and the secretFiles its process lists. */}}
{{- define "ac.volumes" -}}
- name: tmp
  emptyDir:
    sizeLimit: 64Mi
{{- range $index, $file := .root.Values.secretFiles }}
{{- if has $.process $file.processes }}
- name: secret-file-{{ $index }}
  secret:
    secretName: {{ $file.secretName }}
    defaultMode: 0440
{{- end }}
{{- end }}
{{- end -}}

{{- define "ac.volumeMounts" -}}
- name: tmp
  mountPath: /tmp
{{- range $index, $file := .root.Values.secretFiles }}
{{- if has $.process $file.processes }}
- name: secret-file-{{ $index }}
  mountPath: {{ $file.mountPath }}
  readOnly: true
{{- end }}
{{- end }}
{{- end -}}

{{/* The pod's security: the image's uid 1000 (node's user), never root, no privilege to gain. */}}
{{- define "ac.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
fsGroup: 1000
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "ac.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
{{- end -}}

{{/* The ConfigMap's hash on a pod, so a changed setting rolls the pods. */}}
{{- define "ac.configChecksum" -}}
checksum/config: {{ include "ac.configData" . | sha256sum }}
{{- end -}}
