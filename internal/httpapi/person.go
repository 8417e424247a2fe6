package httpapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/person"
	"github.com/sendonce/sendonce/internal/transactional"
	"github.com/sendonce/sendonce/internal/unsubscribe"
)

// subscriberActivity answers GET /v1/subscribers/{id}/activity, newest first.
func (s *Server) subscriberActivity(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	listing := "activity:" + strconv.FormatInt(id, 10)
	p, err := parsePage(r, listing)
	if err != nil {
		return err
	}
	var before *person.Cursor
	if p.AfterKey != "" {
		at, kind, ok := strings.Cut(p.AfterKey, "|")
		t, terr := time.Parse(time.RFC3339Nano, at)
		if !ok || terr != nil {
			return apperr.Invalidf("/cursor", "cursor is not valid")
		}
		before = &person.Cursor{At: t, Kind: kind, ID: p.AfterID}
	}
	items, err := s.People.Activity(r.Context(), accountID(r), id, before, p.Limit+1)
	if err != nil {
		return err
	}
	items, next := pageOf(r, listing, p, items, func(x person.Item) cursor {
		return cursor{ID: x.RefID, Key: x.At.Format(time.RFC3339Nano) + "|" + x.Kind}
	})
	return encode(w, http.StatusOK, api.ActivityPage{Data: toAPIActivity(items), NextCursor: next})
}

// exportSubscriber answers GET /v1/subscribers/{id}/export: the person's data, as
// a JSON download.
func (s *Server) exportSubscriber(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	x, err := s.People.ExportSubscriber(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="subscriber-%d.json"`, id))
	w.Header().Set("Cache-Control", "no-store")
	return encode(w, http.StatusOK, toAPIExport(x))
}

func toAPIActivity(items []person.Item) []api.ActivityItem {
	out := make([]api.ActivityItem, len(items))
	for i, x := range items {
		data := map[string]any{}
		_ = json.Unmarshal(x.Data, &data) // built by jsonb_build_object: always an object
		out[i] = api.ActivityItem{At: x.At, Kind: x.Kind, Id: x.RefID, Data: data}
	}
	return out
}

func toAPIExport(x person.Export) api.PersonExport {
	out := api.PersonExport{GeneratedAt: x.GeneratedAt, Email: x.Email, Consents: make([]api.Consent, len(x.Consents)),
		Activity: toAPIActivity(x.Activity), Truncated: x.Truncated}
	for i, c := range x.Consents {
		out.Consents[i] = api.Consent{ListId: c.ListID, ListName: c.ListName, Status: api.ConsentStatus(c.Status),
			Source: c.Source, StatusAt: c.StatusAt, CreatedAt: c.CreatedAt}
	}
	if p := x.Profile; p != nil {
		attrs := map[string]any{}
		_ = json.Unmarshal(p.Attributes, &attrs)
		out.Profile = &api.PersonProfile{Id: p.ID, Email: p.Email, Name: p.Name, Attributes: attrs,
			Status: api.PersonProfileStatus(p.Status), Signup: p.Signup, OptinSentAt: p.OptinSentAt,
			CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
	}
	return out
}

// mailExport sends the person named by a preference link their data export, as a
// JSON attachment of a transactional message to the address, from the sender of
// the mail that carried the link. It is never shown on the page: whoever holds a
// forwarded link is not necessarily the person.
func (s *Server) mailExport(ctx context.Context, rec unsubscribe.Recipient) error {
	var x person.Export
	var err error
	if rec.Kind == unsubscribe.KindMessage {
		x, err = s.People.ExportAddress(ctx, rec.AccountID, rec.Email, strings.ToLower(rec.Email))
	} else {
		x, err = s.People.ExportSubscriber(ctx, rec.AccountID, rec.SubscriberID)
	}
	if err != nil {
		return err
	}
	fromEmail, fromName, err := s.People.ExportSender(ctx, rec.AccountID, rec.CampaignID, rec.MessageID)
	if err != nil {
		return err
	}
	body, err := json.MarshalIndent(toAPIExport(x), "", "  ")
	if err != nil {
		return err
	}
	subject := "Your data"
	text := "Attached is everything this sender keeps about you (your-data.json).\n"
	key := fmt.Sprintf("data-export:%d:%d:%d", rec.SubscriberID, rec.MessageID, s.Now().UnixNano())
	_, _, err = s.Transactional.SendForRecipient(ctx, rec.AccountID, key, transactional.Request{
		To: x.Email, From: fromEmail, FromName: fromName, Subject: &subject, Text: &text,
		Category: "transactional",
		Attachments: []transactional.Attachment{{Filename: "your-data.json", ContentType: "application/json",
			Content: base64.StdEncoding.EncodeToString(body)}},
	})
	return err
}
