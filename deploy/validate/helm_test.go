package validate

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/releaseutil"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

var chartDir = filepath.Join(root, "deploy", "helm", "sendonce")

// serviceMonitor is the part of the Prometheus Operator's ServiceMonitor the chart
// uses; its CRD types are not a dependency here, so unknown fields are errors
// against this struct instead.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port     string `json:"port"`
			Path     string `json:"path"`
			Interval string `json:"interval"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// rendered is the chart's output, each manifest decoded strictly into its type.
type rendered struct {
	deployments map[string]*appsv1.Deployment
	services    map[string]*corev1.Service
	jobs        map[string]*batchv1.Job
	pdbs        map[string]*policyv1.PodDisruptionBudget
	monitors    map[string]*serviceMonitor
	ingresses   map[string]*networkingv1.Ingress
}

// renderFiles renders the chart with Helm's own engine (as `helm template` does,
// offline), validating the values against values.schema.json first unless
// skipSchema; apiVersions are what the cluster serves beyond Kubernetes' own (as
// `helm template --api-versions`).
func renderFiles(t *testing.T, overrides map[string]any, apiVersions []string, skipSchema bool) (map[string]string, error) {
	t.Helper()
	ch, err := loader.Load(chartDir)
	require.NoError(t, err)
	vals, err := chartutil.CoalesceValues(ch, overrides)
	require.NoError(t, err)
	caps := chartutil.DefaultCapabilities.Copy()
	caps.APIVersions = append(caps.APIVersions, apiVersions...)
	top, err := chartutil.ToRenderValuesWithSchemaValidation(ch, vals, chartutil.ReleaseOptions{Name: "mail", Namespace: "sendonce",
		Revision: 2, IsUpgrade: true}, caps, skipSchema)
	if err != nil {
		return nil, err
	}
	return engine.Render(ch, top)
}

// render renders the chart on a cluster without the Prometheus Operator.
func render(t *testing.T, overrides map[string]any) rendered {
	t.Helper()
	return renderOn(t, overrides, nil)
}

// renderOn renders the chart (renderFiles) and decodes every manifest strictly: an
// unknown or misplaced field, a duplicate key or a wrong type fails the test, as the
// API server would refuse the manifest.
func renderOn(t *testing.T, overrides map[string]any, apiVersions []string) rendered {
	t.Helper()
	files, err := renderFiles(t, overrides, apiVersions, false)
	require.NoError(t, err)
	out := rendered{map[string]*appsv1.Deployment{}, map[string]*corev1.Service{}, map[string]*batchv1.Job{},
		map[string]*policyv1.PodDisruptionBudget{}, map[string]*serviceMonitor{}, map[string]*networkingv1.Ingress{}}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, file := range names {
		if strings.HasSuffix(file, ".tpl") || strings.HasSuffix(file, "NOTES.txt") {
			continue
		}
		for _, doc := range releaseutil.SplitManifests(files[file]) {
			var tm metav1.TypeMeta
			require.NoError(t, yaml.Unmarshal([]byte(doc), &tm), file)
			if tm.Kind == "" {
				continue // a template that rendered to nothing
			}
			strict := func(obj any) string {
				require.NoError(t, yaml.UnmarshalStrict([]byte(doc), obj), "%s: %s\n%s", file, tm.Kind, doc)
				return obj.(metav1.Object).GetName()
			}
			switch tm.GroupVersionKind().String() {
			case "apps/v1, Kind=Deployment":
				o := &appsv1.Deployment{}
				out.deployments[strict(o)] = o
			case "/v1, Kind=Service":
				o := &corev1.Service{}
				out.services[strict(o)] = o
			case "batch/v1, Kind=Job":
				o := &batchv1.Job{}
				out.jobs[strict(o)] = o
			case "policy/v1, Kind=PodDisruptionBudget":
				o := &policyv1.PodDisruptionBudget{}
				out.pdbs[strict(o)] = o
			case "networking.k8s.io/v1, Kind=Ingress":
				o := &networkingv1.Ingress{}
				out.ingresses[strict(o)] = o
			case "monitoring.coreos.com/v1, Kind=ServiceMonitor":
				o := &serviceMonitor{}
				out.monitors[strict(o)] = o
			default:
				t.Fatalf("%s: %s has no strict decoder in this test: add one", file, tm.GroupVersionKind())
			}
		}
	}
	return out
}

func envOf(c corev1.Container) map[string]corev1.EnvVar {
	out := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		out[e.Name] = e
	}
	return out
}

// TestHelmLint runs Helm's own linter on the chart (offline) as `helm lint --strict`
// does: a warning fails as an error would. It lints the defaults and the optional
// parts turned on (values.schema.json included).
func TestHelmLint(t *testing.T) {
	t.Parallel()
	for _, vals := range []map[string]any{{}, {
		"ingress":        map[string]any{"enabled": true, "className": "nginx", "tls": map[string]any{"secretName": "mail-tls"}},
		"serviceMonitor": map[string]any{"enabled": true},
		"secrets":        map[string]any{"secretsKey": map[string]any{"name": "ring"}, "messageIdKey": map[string]any{"name": "mid"}},
	}} {
		l := lint.All(chartDir, vals, "sendonce", true)
		var msgs []string
		for _, m := range l.Messages {
			if m.Severity >= support.WarningSev {
				msgs = append(msgs, m.Error())
			}
		}
		require.Empty(t, msgs, "%v", vals)
	}
	// The linter checks values.yaml against the schema: a secret among the plain
	// settings is an error.
	l := lint.All(chartDir, map[string]any{"env": map[string]any{"SENDONCE_SECRETS_KEY": "k:v"}}, "sendonce", true)
	require.Equal(t, support.ErrorSev, l.HighestSeverity)
}

func TestHelmChart(t *testing.T) {
	t.Parallel()
	r := renderOn(t, map[string]any{"serviceMonitor": map[string]any{"enabled": true}}, []string{monitoringAPI})
	settings := readmeSettings(t)
	require.Len(t, r.deployments, 2)
	api, executor := r.deployments["mail-sendonce-api"], r.deployments["mail-sendonce-executor"]
	require.NotNil(t, api)
	require.NotNil(t, executor)
	require.Equal(t, []string{"serve", "--executor=false"}, api.Spec.Template.Spec.Containers[0].Args)
	require.Equal(t, []string{"serve", "--api=false"}, executor.Spec.Template.Spec.Containers[0].Args)

	// Probes: readiness on /readyz (database and migrations), liveness on /healthz (process).
	c := api.Spec.Template.Spec.Containers[0]
	require.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path)
	require.Equal(t, "/healthz", c.LivenessProbe.HTTPGet.Path)
	require.Equal(t, "http", c.ReadinessProbe.HTTPGet.Port.String())
	require.Equal(t, "http", c.Ports[0].Name)
	require.Equal(t, ":8080", envOf(c)["SENDONCE_ADDR"].Value)
	// The executor has no API listener: its metrics listener answers the probes.
	x := executor.Spec.Template.Spec.Containers[0]
	require.Equal(t, ":9090", envOf(x)["SENDONCE_METRICS_ADDR"].Value)
	require.Equal(t, "metrics", x.Ports[0].Name)
	require.EqualValues(t, 9090, x.Ports[0].ContainerPort)
	require.NotNil(t, x.ReadinessProbe, "executor readiness")
	require.NotNil(t, x.LivenessProbe, "executor liveness")
	require.Equal(t, "/readyz", x.ReadinessProbe.HTTPGet.Path)
	require.Equal(t, "/healthz", x.LivenessProbe.HTTPGet.Path)
	require.Equal(t, "metrics", x.ReadinessProbe.HTTPGet.Port.String())
	require.Equal(t, "metrics", x.LivenessProbe.HTTPGet.Port.String())
	require.Empty(t, envOf(x)["SENDONCE_ADDR"].Value, "no API listener on the executor")

	job := r.jobs["mail-sendonce-migrate"]
	require.NotNil(t, job)
	require.Equal(t, []string{"migrate"}, job.Spec.Template.Spec.Containers[0].Args)
	require.Equal(t, "pre-install,pre-upgrade", job.Annotations["helm.sh/hook"])
	require.Equal(t, corev1.RestartPolicyNever, job.Spec.Template.Spec.RestartPolicy)

	pods := map[string]corev1.PodSpec{"api": api.Spec.Template.Spec, "executor": executor.Spec.Template.Spec,
		"migrate": job.Spec.Template.Spec}
	for name, spec := range pods {
		require.True(t, *spec.SecurityContext.RunAsNonRoot, name)
		env := envOf(spec.Containers[0])
		// Secrets come from Secrets, never from values.
		for _, secret := range []string{"SENDONCE_DATABASE_URL", "SENDONCE_UNSUBSCRIBE_SECRET"} {
			require.NotNil(t, env[secret].ValueFrom, "%s: %s", name, secret)
			require.NotNil(t, env[secret].ValueFrom.SecretKeyRef, "%s: %s", name, secret)
			require.Empty(t, env[secret].Value)
		}
		for k := range env {
			require.True(t, settings[k], "%s sets %s, which docs/configuration.md does not list", name, k)
		}
		if name == "migrate" {
			continue
		}
		// Kubernetes' SIGKILL comes after the service's own shutdown deadline.
		shutdown, err := time.ParseDuration(env["SENDONCE_SHUTDOWN_TIMEOUT"].Value)
		require.NoError(t, err, name)
		require.Greater(t, time.Duration(*spec.TerminationGracePeriodSeconds)*time.Second, shutdown, name)
	}

	// Each Deployment has a PodDisruptionBudget that selects exactly its pods.
	for _, d := range []*appsv1.Deployment{api, executor} {
		pdb := r.pdbs[d.Name]
		require.NotNil(t, pdb, d.Name)
		require.NotNil(t, pdb.Spec.MinAvailable)
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		require.NoError(t, err)
		require.True(t, sel.Matches(labels.Set(d.Spec.Template.Labels)), d.Name)
		dsel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		require.NoError(t, err)
		require.True(t, dsel.Matches(labels.Set(d.Spec.Template.Labels)), d.Name)
	}
	require.False(t, mustSelector(t, r.pdbs["mail-sendonce-api"].Spec.Selector).Matches(labels.Set(executor.Spec.Template.Labels)))

	// The Service reaches the API pods; the ServiceMonitor selects that Service and scrapes /metrics by port name.
	svc := r.services["mail-sendonce-api"]
	require.NotNil(t, svc)
	require.True(t, labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(api.Spec.Template.Labels)))
	require.False(t, labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(executor.Spec.Template.Labels)))
	sm := r.monitors["mail-sendonce"]
	require.NotNil(t, sm)
	require.True(t, mustSelector(t, &sm.Spec.Selector).Matches(labels.Set(svc.Labels)))
	require.Equal(t, "/metrics", sm.Spec.Endpoints[0].Path)
	require.Equal(t, svc.Spec.Ports[0].Name, sm.Spec.Endpoints[0].Port)

	// The executors' metrics: a headless Service of the executor pods only, and a
	// ServiceMonitor of that Service alone scraping the metrics port.
	xsvc := r.services["mail-sendonce-executor-metrics"]
	require.NotNil(t, xsvc)
	require.Equal(t, "None", xsvc.Spec.ClusterIP)
	require.True(t, labels.SelectorFromSet(xsvc.Spec.Selector).Matches(labels.Set(executor.Spec.Template.Labels)))
	require.False(t, labels.SelectorFromSet(xsvc.Spec.Selector).Matches(labels.Set(api.Spec.Template.Labels)))
	require.Equal(t, "metrics", xsvc.Spec.Ports[0].TargetPort.String())
	xsm := r.monitors["mail-sendonce-executor"]
	require.NotNil(t, xsm)
	require.True(t, mustSelector(t, &xsm.Spec.Selector).Matches(labels.Set(xsvc.Labels)))
	require.False(t, mustSelector(t, &xsm.Spec.Selector).Matches(labels.Set(svc.Labels)))
	require.False(t, mustSelector(t, &sm.Spec.Selector).Matches(labels.Set(xsvc.Labels)), "each monitor its own pods")
	require.Equal(t, "/metrics", xsm.Spec.Endpoints[0].Path)
	require.Equal(t, xsvc.Spec.Ports[0].Name, xsm.Spec.Endpoints[0].Port)
}

// TestHelmChartBehindPgBouncer: with the optional Secrets named (a direct URL beside
// a pooled one, the sender key ring) every pod gets them by reference, and a longer
// shutdown timeout lengthens the grace period with it.
func TestHelmChartBehindPgBouncer(t *testing.T) {
	t.Parallel()
	r := render(t, map[string]any{
		"secrets": map[string]any{
			"directDatabaseUrl": map[string]any{"name": "pg-direct"},
			"secretsKey":        map[string]any{"name": "ring"},
		},
		"env":                    map[string]any{"SENDONCE_DATABASE_EXEC_MODE": "exec", "SENDONCE_PROVIDER": "smtp"},
		"shutdownTimeoutSeconds": 120,
		"serviceMonitor":         map[string]any{"enabled": false},
	})
	require.Empty(t, r.monitors)
	for _, d := range r.deployments {
		spec := d.Spec.Template.Spec
		env := envOf(spec.Containers[0])
		require.Equal(t, "pg-direct", env["SENDONCE_DIRECT_DATABASE_URL"].ValueFrom.SecretKeyRef.Name, d.Name)
		require.Equal(t, "ring", env["SENDONCE_SECRETS_KEY"].ValueFrom.SecretKeyRef.Name, d.Name)
		require.Equal(t, "exec", env["SENDONCE_DATABASE_EXEC_MODE"].Value)
		require.Equal(t, "120s", env["SENDONCE_SHUTDOWN_TIMEOUT"].Value)
		require.Greater(t, *spec.TerminationGracePeriodSeconds, int64(120), d.Name)
	}
}

func mustSelector(t *testing.T, s *metav1.LabelSelector) labels.Selector {
	t.Helper()
	sel, err := metav1.LabelSelectorAsSelector(s)
	require.NoError(t, err)
	return sel
}

// monitoringAPI is the Prometheus Operator's API group and version, served only
// where its CRDs are installed.
const monitoringAPI = "monitoring.coreos.com/v1"

// TestHelmChartDefaults: the default values install on a bare cluster: no
// ServiceMonitor (a kind the API server would not know fails the whole install)
// and no Ingress; the Secrets every process needs are referenced by name.
func TestHelmChartDefaults(t *testing.T) {
	t.Parallel()
	r := render(t, nil)
	require.Len(t, r.deployments, 2)
	require.Empty(t, r.monitors, "serviceMonitor is off by default")
	require.Empty(t, r.ingresses, "the Ingress is off by default")
	for _, d := range r.deployments {
		env := envOf(d.Spec.Template.Spec.Containers[0])
		require.Equal(t, "sendonce-database", env["SENDONCE_DATABASE_URL"].ValueFrom.SecretKeyRef.Name, d.Name)
		require.Equal(t, "sendonce-secrets", env["SENDONCE_UNSUBSCRIBE_SECRET"].ValueFrom.SecretKeyRef.Name, d.Name)
		for _, optional := range []string{"SENDONCE_SECRETS_KEY", "SENDONCE_MESSAGE_ID_KEY", "SENDONCE_HTTP_PROVIDER_AUTH",
			"SENDONCE_SMTP_PASSWORD", "SENDONCE_DIRECT_DATABASE_URL"} {
			_, set := env[optional]
			require.False(t, set, "%s: %s without a Secret named", d.Name, optional)
		}
	}
}

// TestHelmServiceMonitorNeedsOperator: serviceMonitor.enabled renders the
// ServiceMonitors only where the cluster serves monitoring.coreos.com/v1.
func TestHelmServiceMonitorNeedsOperator(t *testing.T) {
	t.Parallel()
	on := map[string]any{"serviceMonitor": map[string]any{"enabled": true}}
	require.Empty(t, render(t, on).monitors, "no Prometheus Operator: no ServiceMonitor")
	require.Len(t, renderOn(t, on, []string{monitoringAPI}).monitors, 2)
	require.Empty(t, renderOn(t, nil, []string{monitoringAPI}).monitors, "the Operator alone does not turn them on")
}

// TestHelmRequiredSecrets: an empty name or key of a Secret every process needs
// fails the install, naming the value, instead of rendering secretKeyRef name "":
// values.schema.json refuses it, and without schema validation (helm
// --skip-schema-validation) the templates' `required` still does. A named optional
// Secret needs its key.
func TestHelmRequiredSecrets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		secrets        map[string]any
		schema, render string
	}{
		{map[string]any{"databaseUrl": map[string]any{"name": ""}}, "databaseUrl", "secrets.databaseUrl.name"},
		{map[string]any{"unsubscribeSecret": map[string]any{"name": ""}}, "unsubscribeSecret", "secrets.unsubscribeSecret.name"},
		{map[string]any{"unsubscribeSecret": map[string]any{"key": ""}}, "unsubscribeSecret", "secrets.unsubscribeSecret.key"},
		{map[string]any{"secretsKey": map[string]any{"name": "ring", "key": ""}}, "secretsKey", "needs its key"},
	} {
		vals := map[string]any{"secrets": tc.secrets}
		_, err := renderFiles(t, vals, nil, false)
		require.Error(t, err, "%v passes the schema", tc.secrets)
		require.Contains(t, err.Error(), tc.schema)
		_, err = renderFiles(t, vals, nil, true)
		require.Error(t, err, "%v renders without the schema", tc.secrets)
		require.Contains(t, err.Error(), tc.render)
	}
}

// TestHelmValuesSchema: values.schema.json refuses a secret passed as a plain
// setting (it would sit in the Deployment, readable by anyone who can read it),
// a setting that is not SENDONCE_*, a misspelt value and an enabled Ingress without
// a host.
func TestHelmValuesSchema(t *testing.T) {
	t.Parallel()
	for _, vals := range []map[string]any{
		{"env": map[string]any{"SENDONCE_SECRETS_KEY": "k1:AAAA"}},
		{"env": map[string]any{"SENDONCE_UNSUBSCRIBE_SECRET": "k:s"}},
		{"env": map[string]any{"DATABASE_URL": "postgres://x"}},
		{"serviceMonitor": map[string]any{"enable": true}},
		{"ingress": map[string]any{"enabled": true, "host": ""}},
		{"image": map[string]any{"pullPolicy": "Sometimes"}},
	} {
		_, err := renderFiles(t, vals, nil, false)
		require.Error(t, err, "%v passes the schema", vals)
	}
}

// TestHelmIngress: the optional Ingress routes its host to the API Service's http
// port, with TLS when a Secret is named and the class and annotations given.
func TestHelmIngress(t *testing.T) {
	t.Parallel()
	r := render(t, map[string]any{"ingress": map[string]any{"enabled": true, "host": "mail.example.org", "className": "nginx",
		"annotations": map[string]any{"nginx.ingress.kubernetes.io/proxy-read-timeout": "3600"},
		"tls":         map[string]any{"secretName": "mail-tls"}}})
	ing := r.ingresses["mail-sendonce"]
	require.NotNil(t, ing)
	require.Equal(t, "nginx", *ing.Spec.IngressClassName)
	require.Equal(t, "3600", ing.Annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"])
	require.Equal(t, []networkingv1.IngressTLS{{Hosts: []string{"mail.example.org"}, SecretName: "mail-tls"}}, ing.Spec.TLS)
	require.Len(t, ing.Spec.Rules, 1)
	rule := ing.Spec.Rules[0]
	require.Equal(t, "mail.example.org", rule.Host)
	path := rule.HTTP.Paths[0]
	require.Equal(t, "/", path.Path)
	require.Equal(t, networkingv1.PathTypePrefix, *path.PathType)
	svc := r.services[path.Backend.Service.Name]
	require.NotNil(t, svc, "the Ingress names the API Service")
	require.Equal(t, svc.Spec.Ports[0].Name, path.Backend.Service.Port.Name)
	require.True(t, labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(r.deployments["mail-sendonce-api"].Spec.Template.Labels)))

	plain := render(t, map[string]any{"ingress": map[string]any{"enabled": true}}).ingresses["mail-sendonce"]
	require.NotNil(t, plain)
	require.Empty(t, plain.Spec.TLS)
	require.Nil(t, plain.Spec.IngressClassName)
	require.Equal(t, "mail.example.com", plain.Spec.Rules[0].Host)
}

// TestHelmNotes: NOTES.txt renders, and says how to reach the API and create an
// account with the names the chart gave.
func TestHelmNotes(t *testing.T) {
	t.Parallel()
	files, err := renderFiles(t, map[string]any{"serviceMonitor": map[string]any{"enabled": true}}, nil, false)
	require.NoError(t, err)
	notes := files["sendonce/templates/NOTES.txt"]
	require.Contains(t, notes, "port-forward svc/mail-sendonce-api 8080:80")
	require.Contains(t, notes, "exec deploy/mail-sendonce-api -- /sendonce account create NAME")
	require.Contains(t, notes, "no ServiceMonitor was created")
	files, err = renderFiles(t, map[string]any{"ingress": map[string]any{"enabled": true, "tls": map[string]any{"secretName": "t"}}},
		[]string{monitoringAPI}, false)
	require.NoError(t, err)
	require.Contains(t, files["sendonce/templates/NOTES.txt"], "https://mail.example.com/")
	require.NotContains(t, files["sendonce/templates/NOTES.txt"], "ServiceMonitor")
}
