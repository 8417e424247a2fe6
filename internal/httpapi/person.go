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
	"github.com/sendonce/sendonce/internal/transactional"
	"github.com/sendonce/sendonce/internal/unsubscribe"
)

// People reads a person's activity and data export (person.API).
type People interface {
	// Activity is a page of the subscriber's activity, newest first, before the
	// cursor's key ("time|kind") and id when the key is not "".
	Activity(ctx context.Context, accountID, subscriberID int64, beforeKey string, beforeID int64, limit int) ([]api.ActivityItem, error)
	ExportSubscriber(ctx context.Context, accountID, subscriberID int64) (api.PersonExport, error)
	ExportAddress(ctx context.Context, accountID int64, email, lower string) (api.PersonExport, error)
	ExportSender(ctx context.Context, accountID, campaignID, messageID int64) (email, name string, err error)
}

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
	items, err := s.People.Activity(r.Context(), accountID(r), id, p.AfterKey, p.AfterID, p.Limit+1)
	if err != nil {
		return err
	}
	items, next := pageOf(r, listing, p, items, func(x api.ActivityItem) cursor {
		return cursor{ID: x.Id, Key: x.At.Format(time.RFC3339Nano) + "|" + x.Kind}
	})
	return encode(w, http.StatusOK, api.ActivityPage{Data: items, NextCursor: next})
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
	return encode(w, http.StatusOK, x)
}

// mailExport sends the person named by a preference link their data export, as a
// JSON attachment of a transactional message to the address, from the sender of
// the mail that carried the link. It is never shown on the page: whoever holds a
// forwarded link is not necessarily the person.
func (s *Server) mailExport(ctx context.Context, rec unsubscribe.Recipient) error {
	var x api.PersonExport
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
	body, err := json.MarshalIndent(x, "", "  ")
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
