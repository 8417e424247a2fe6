package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sendonce/sendonce"
	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/subscriber"
)

// FuzzDecodeCursor: any string either decodes to a cursor of this account and listing
// or is a clean invalid-input error on /cursor; never a panic.
func FuzzDecodeCursor(f *testing.F) {
	f.Add(encodeCursor(cursor{Account: 1, Listing: "subscribers", ID: 42}))
	f.Add(encodeCursor(cursor{Account: 1, Listing: "suppressions", Key: "a@example.com"}))
	f.Add("")
	f.Add("e30")
	f.Add("!!!")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := decodeCursor(s, 1, "subscribers")
		if err != nil {
			var e *apperr.Error
			if !asAppErr(err, &e) || e.Code != apperr.Invalid || len(e.Fields) != 1 || e.Fields[0].Pointer != "/cursor" {
				t.Fatalf("unclean rejection %v", err)
			}
			return
		}
		if c.Account != 1 || c.Listing != "subscribers" {
			t.Fatalf("accepted a foreign cursor %+v", c)
		}
	})
}

func asAppErr(err error, e **apperr.Error) bool {
	x, ok := err.(*apperr.Error)
	*e = x
	return ok
}

// fuzzServer is a Server with the spec and nothing else: enough for the decode and
// validation paths, which must refuse bad input before anything touches the database.
func fuzzServer() *Server {
	spec, err := newSpecRouter(sendonce.OpenAPI)
	if err != nil {
		panic(err)
	}
	return &Server{Deps: Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, spec: spec}
}

// FuzzRequestBody sends arbitrary bytes as the JSON body of the create routes through
// the spec validator and the handler's decoder: each is accepted or answered with a
// clean 4xx problem, never a panic or a 5xx.
func FuzzRequestBody(f *testing.F) {
	for _, seed := range []string{`{"email":"a@example.com"}`, `{"email":5}`, `{"name":"x","subject":"y","from_email":"a@b.co","list_ids":[1,2]}`,
		`[]`, `{`, `null`, `{"email":"a@example.com","attributes":{"a":[1,{"b":null}]}}`, "\x00", `{"email":"a@example.com"} {}`} {
		f.Add([]byte(seed))
	}
	s := fuzzServer()
	s.opts.MaxBodyBytes = 1 << 16
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, path := range []string{"/v1/subscribers", "/v1/campaigns", "/v1/lists", "/v1/suppressions"} {
			passed := false
			h := s.validateRequest(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				passed = true
				var err error
				switch path {
				case "/v1/subscribers":
					_, err = decode[api.SubscriberCreate](w, r, s.opts.MaxBodyBytes)
				case "/v1/campaigns":
					_, err = decode[api.CampaignCreate](w, r, s.opts.MaxBodyBytes)
				case "/v1/lists":
					_, err = decode[api.ListCreate](w, r, s.opts.MaxBodyBytes)
				default:
					_, err = decode[api.SuppressionCreate](w, r, s.opts.MaxBodyBytes)
				}
				if err != nil {
					writeError(w, r, s.Logger, err)
				}
			}))
			req := httptest.NewRequest("POST", path, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Fatalf("%s: %d for %q: %s", path, rec.Code, body, rec.Body)
			}
			if rec.Code >= 400 {
				var p Problem
				if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Status != rec.Code {
					t.Fatalf("%s: unclean %d: %s", path, rec.Code, rec.Body)
				}
			} else if !passed {
				t.Fatalf("%s: neither refused nor handled", path)
			}
		}
	})
}

// FuzzImportParsers: the JSON and CSV import readers never panic, and every failure
// is an application error (a 4xx), never an internal one.
func FuzzImportParsers(f *testing.F) {
	f.Add(`[{"email":"a@example.com","name":"A","attributes":{"x":1}},{"email":7}]`)
	f.Add("email,name,status,attributes,plan\na@example.com,A,confirmed,\"{\"\"x\"\":1}\",pro\n\"broken")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		if _, _, err := parseJSONImport(strings.NewReader(s)); err != nil && apperr.CodeOf(err) == apperr.Internal {
			t.Fatalf("json import: internal error %v", err)
		}
		if _, _, err := subscriber.ParseCSV(strings.NewReader(s), ""); err != nil && apperr.CodeOf(err) == apperr.Internal {
			t.Fatalf("csv import: internal error %v", err)
		}
	})
}
