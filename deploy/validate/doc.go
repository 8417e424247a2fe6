// Package validate checks what people deploy sendonce with, offline: compose.yaml
// through the compose-spec loader, the Helm chart rendered by Helm's own engine and
// decoded strictly into the Kubernetes API types. It is a module of its own so the
// service's build never carries Helm or the Kubernetes types.
package validate
