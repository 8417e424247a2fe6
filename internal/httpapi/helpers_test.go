package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce"
	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/httpapi"
	"github.com/sendonce/sendonce/internal/httpapi/httpapitest"
)

// specRouter is openapi.yaml for checking responses; loaded once per test binary.
var specRouter = func() routers.Router {
	doc, err := openapi3.NewLoader().LoadFromData(sendonce.OpenAPI)
	if err != nil {
		panic(err)
	}
	doc.Servers = nil
	r, err := legacy.NewRouter(doc)
	if err != nil {
		panic(err)
	}
	return r
}()

// env is a real API on a fresh database with two accounts, A and B.
type env struct {
	t          *testing.T
	pool       *pgxpool.Pool
	handler    http.Handler
	keyA, keyB string
}

func setup(t *testing.T, mutate ...func(*config.Config)) *env {
	t.Helper()
	return setupDeps(t, nil, mutate...)
}

// setupDeps is setup with a last say on the server's dependencies.
func setupDeps(t *testing.T, deps func(*httpapi.Deps), mutate ...func(*config.Config)) *env {
	t.Helper()
	pool := dbtest.New(t)
	accounts := account.NewService(pool)
	ctx := context.Background()
	_, keyA, err := accounts.Create(ctx, "account a")
	require.NoError(t, err)
	_, keyB, err := accounts.Create(ctx, "account b")
	require.NoError(t, err)
	cfg := config.Default()
	cfg.APIRatePerSecond = 0
	cfg.AuthFailureRatePerSecond = 0
	// Tests make bursts of requests; the in-flight bound has its own (shed_test.go).
	cfg.APIMaxInFlight = 1 << 16
	for _, m := range mutate {
		m(&cfg)
	}
	var with []func(*httpapi.Deps)
	if deps != nil {
		with = append(with, deps)
	}
	h := httpapitest.New(t, pool, cfg, with...)
	return &env{t: t, pool: pool, handler: h, keyA: keyA, keyB: keyB}
}

// response is a recorded answer.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// decode unmarshals the body into a fresh T.
func decodeAs[T any](t *testing.T, r response) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(r.Body, &v), "body: %s", r.Body)
	return v
}

// do sends one request as key and checks the response against openapi.yaml. body
// is sent as is when it is a string or []byte, as JSON otherwise; headers are
// name, value pairs (a Content-Type among them replaces application/json).
func (e *env) do(key, method, path string, body any, headers ...string) response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		require.NoError(e.t, err)
		rd = bytes.NewReader(j)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	res := response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	checkResponse(e.t, req, res)
	return res
}

// checkResponse validates res against the operation of req in openapi.yaml. A
// request the spec does not know must have been answered with a problem.
func checkResponse(t *testing.T, req *http.Request, res response) {
	t.Helper()
	clean := req.Clone(context.Background())
	clean.Body = http.NoBody
	route, params, err := specRouter.FindRoute(clean)
	if err != nil {
		require.Contains(t, []int{http.StatusNotFound, http.StatusMethodNotAllowed}, res.Status,
			"%s %s is not in openapi.yaml but answered %d", req.Method, req.URL.Path, res.Status)
		require.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: clean, PathParams: params, Route: route},
		Status:                 res.Status,
		Header:                 res.Header,
		Body:                   io.NopCloser(bytes.NewReader(res.Body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	require.NoError(t, openapi3filter.ValidateResponse(context.Background(), in),
		"%s %s → %d does not match openapi.yaml: %s", req.Method, req.URL.Path, res.Status, res.Body)
	if route.Operation.OperationID == "listEvents" && res.Status == http.StatusOK {
		checkEventPage(t, res.Body)
	}
}

// problem is the part of a problem body the tests look at.
type problem struct {
	Type          string `json:"type"`
	Status        int    `json:"status"`
	Detail        string `json:"detail"`
	CurrentStatus string `json:"current_status"`
	Errors        []struct {
		Pointer string `json:"pointer"`
		Detail  string `json:"detail"`
	} `json:"errors"`
}

// pointers lists the JSON pointers a 422 named.
func (p problem) pointers() []string {
	var out []string
	for _, e := range p.Errors {
		out = append(out, e.Pointer)
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func jsonDecode(resp *http.Response, v any) error { return json.NewDecoder(resp.Body).Decode(v) }
