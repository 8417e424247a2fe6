package httpapi

import (
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/export"
)

// exportFormat reads ?format= (csv or ndjson), else the Accept header; CSV when
// neither says.
func exportFormat(r *http.Request) (export.Format, error) {
	switch f := r.URL.Query().Get("format"); f {
	case "csv":
		return export.CSV, nil
	case "ndjson":
		return export.NDJSON, nil
	case "":
	default:
		return "", apperr.Invalidf("/format", "format must be csv or ndjson")
	}
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, _ := mime.ParseMediaType(strings.TrimSpace(part))
		switch mt {
		case "application/x-ndjson", "application/ndjson":
			return export.NDJSON, nil
		case "text/csv":
			return export.CSV, nil
		}
	}
	return export.CSV, nil
}

// streamExport answers an export: the checks first (a bad format is 422, another
// account's campaign 404), then 200 and the rows as they are read. A failure after
// the first byte cannot change the status: the response is cut off (no final
// chunk), which clients see as a failed download, never as a complete file.
func (s *Server) streamExport(w http.ResponseWriter, r *http.Request, req export.Request, name string) error {
	f, err := exportFormat(r)
	if err != nil {
		return err
	}
	req.AccountID = accountID(r)
	if err := s.Exports.Check(r.Context(), req); err != nil {
		return err
	}
	// An export of millions of rows outlasts the server's write timeout.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", f.ContentType())
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.%s"`, name, f))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	out, err := export.NewWriter(f, w, export.Columns[req.Kind])
	if err != nil {
		return err
	}
	n, err := s.Exports.Stream(r.Context(), req, out)
	if err != nil {
		s.Logger.ErrorContext(r.Context(), "export failed", "account", req.AccountID, "kind", req.Kind, "rows", n, "error", err)
		panic(http.ErrAbortHandler)
	}
	s.Logger.InfoContext(r.Context(), "export", "account", req.AccountID, "kind", req.Kind, "rows", n, "format", string(f))
	return nil
}

func (s *Server) exportSubscribers(w http.ResponseWriter, r *http.Request) error {
	listID, err := queryInt64(r, "list_id")
	if err != nil {
		return err
	}
	req := export.Request{Kind: export.Subscribers, Status: queryString(r, "status"), ListID: listID}
	if p := queryString(r, "email"); p != nil {
		l := likePrefix(*p)
		req.EmailPrefix = &l
	}
	switch m := r.URL.Query().Get("membership"); m {
	case "", "subscribed":
		req.Membership = []string{"subscribed"}
	case "unsubscribed", "pending":
		req.Membership = []string{m}
	case "any":
		req.Membership = []string{"subscribed", "unsubscribed", "pending"}
	default:
		return apperr.Invalidf("/membership", "membership must be subscribed, unsubscribed, pending or any")
	}
	return s.streamExport(w, r, req, "subscribers")
}

func (s *Server) exportRecipients(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	return s.streamExport(w, r, export.Request{Kind: export.Recipients, CampaignID: id}, fmt.Sprintf("campaign-%d-recipients", id))
}

func (s *Server) exportSuppressions(w http.ResponseWriter, r *http.Request) error {
	return s.streamExport(w, r, export.Request{Kind: export.Suppressions}, "suppressions")
}

func (s *Server) exportMessages(w http.ResponseWriter, r *http.Request) error {
	// The messages list's filters (listMessages).
	return s.streamExport(w, r, export.Request{Kind: export.Messages, MessageStatus: queryString(r, "status"),
		MessageTo: queryString(r, "to"), MessageTag: queryString(r, "tag")}, "messages")
}

func (s *Server) exportEvents(w http.ResponseWriter, r *http.Request) error {
	return s.streamExport(w, r, export.Request{Kind: export.Events}, "events")
}

// likePrefix escapes LIKE's wildcards in a lower-cased address prefix, as the
// subscriber listing does.
func likePrefix(p string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(p) {
		if c == '%' || c == '_' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
