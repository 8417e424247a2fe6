package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/optional"
	"github.com/sendonce/sendonce/internal/transactional"
)

func toAPIMessage(m transactional.Message) api.Message {
	tags := m.Tags
	if tags == nil {
		tags = []string{}
	}
	replyTo := []string{}
	if m.ReplyTo != "" {
		replyTo = append(append(replyTo, m.ReplyTo), m.MoreReplyTo...)
	}
	atts := make([]api.Attachment, len(m.Attachments))
	for i, a := range m.Attachments {
		atts[i] = api.Attachment{Filename: a.Filename, ContentType: a.ContentType, ContentId: a.ContentID, Size: a.Size, Sha256: a.SHA256}
	}
	return api.Message{Id: m.ID, IdempotencyKey: m.IdempotencyKey, Category: api.MessageCategory(m.Category), Subject: m.Subject,
		To: m.To, ToName: m.ToName, From: m.From, FromName: m.FromName, ReplyTo: m.ReplyTo, TemplateId: m.TemplateID,
		ReplyToList: replyTo, Cc: optional.NonNil(m.Cc), Bcc: optional.NonNil(m.Bcc), Attachments: atts,
		SenderId: m.SenderID, PoolId: m.PoolID,
		Tags: tags, SendAt: m.SendAt, Status: api.SendStatus(m.Status), Attempts: m.Attempts,
		ProviderMessageId: m.ProviderMessageID, LastError: m.LastError, Feedback: m.Feedback, SentAt: m.SentAt,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, TrackClicks: m.TrackClicks, TrackOpens: m.TrackOpens,
		Engagement: toAPIMessageEngagement(m.Engagement)}
}

func toAPIMessageEngagement(e *transactional.Engagement) *api.MessageEngagement {
	if e == nil {
		return nil
	}
	return &api.MessageEngagement{Clicks: e.Clicks, HumanClicks: e.HumanClicks, HoneypotHits: e.HoneypotHits,
		Opens: e.Opens, HumanOpens: e.HumanOpens}
}

func toRequest(in api.MessageCreate) transactional.Request {
	req := transactional.Request{To: in.To, From: in.From, TemplateID: in.TemplateId, Subject: in.Subject,
		HTML: in.Html, Text: in.Text, Markdown: in.Markdown, Blocks: raw(in.Blocks), LayoutID: in.LayoutId, Data: raw(in.Data), SendAt: in.SendAt, SenderID: in.SenderId,
		PoolID: in.PoolId, TrackClicks: in.TrackClicks, TrackOpens: in.TrackOpens}
	for p, v := range map[*string]*string{&req.ToName: in.ToName, &req.FromName: in.FromName} {
		if v != nil {
			*p = *v
		}
	}
	if in.ReplyTo != nil {
		// One address (a string, the request as before lists) or a list: the
		// first is ReplyTo, the rest MoreReplyTo, so a one-address list and the
		// string hash alike.
		if one, err := in.ReplyTo.AsMessageCreateReplyTo0(); err == nil {
			req.ReplyTo = one
		} else if list, err := in.ReplyTo.AsMessageCreateReplyTo1(); err == nil && len(list) > 0 {
			req.ReplyTo, req.MoreReplyTo = list[0], list[1:]
			if len(req.MoreReplyTo) == 0 {
				req.MoreReplyTo = nil
			}
		}
	}
	if in.Cc != nil && len(*in.Cc) > 0 {
		req.Cc = *in.Cc
	}
	if in.Bcc != nil && len(*in.Bcc) > 0 {
		req.Bcc = *in.Bcc
	}
	if in.Attachments != nil {
		for _, a := range *in.Attachments {
			req.Attachments = append(req.Attachments, transactional.Attachment{Filename: a.Filename, Content: a.Content,
				ContentType: optional.Value(a.ContentType), ContentID: optional.Value(a.ContentId)})
		}
	}
	if in.Category != nil {
		req.Category = string(*in.Category)
	}
	if in.Headers != nil {
		req.Headers = *in.Headers
	}
	if in.Tags != nil {
		req.Tags = *in.Tags
	}
	return req
}

// sendMessage answers 202 with the message the key names, new or not. The key is
// the message's own (transactional.Service), not the 24-hour response store's.
func (s *Server) sendMessage(w http.ResponseWriter, r *http.Request) error {
	key, err := parseIdempotencyKey(r.Header["Idempotency-Key"])
	if err != nil {
		return apperr.Invalidf("/Idempotency-Key", "Idempotency-Key is required: one value of 1 to 255 printable ASCII characters")
	}
	in, err := decode[api.MessageCreate](w, r, s.bodyLimitOf(r))
	if err != nil {
		return err
	}
	m, created, err := s.Transactional.Send(r.Context(), accountID(r), key, toRequest(in))
	if err != nil {
		return err
	}
	if !created {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	return encode(w, http.StatusAccepted, toAPIMessage(m))
}

// batchItem is one answer of a batch: the message, or the problem that refused it.
type batchItem struct {
	Status  int          `json:"status"`
	Message *api.Message `json:"message,omitempty"`
	Problem *Problem     `json:"problem,omitempty"`
}

// sendMessageBatch sends each item as POST /v1/messages would, independently: one
// item's refusal does not stop the others. Internal errors (the database) end the
// request, so a retry of the whole batch resends nothing twice: every item is keyed.
func (s *Server) sendMessageBatch(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.MessageBatch](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	out := struct {
		Results []batchItem `json:"results"`
	}{Results: make([]batchItem, len(in.Messages))}
	for i, item := range in.Messages {
		key, err := parseIdempotencyKey([]string{item.IdempotencyKey})
		if err == nil {
			var m transactional.Message
			m, _, err = s.Transactional.Send(r.Context(), accountID(r), key, toRequest(item.Message))
			if err == nil {
				am := toAPIMessage(m)
				out.Results[i] = batchItem{Status: http.StatusAccepted, Message: &am}
				continue
			}
		}
		var e *apperr.Error
		if !errors.As(err, &e) || e.Code == apperr.Internal || errors.Is(err, context.Canceled) {
			return err
		}
		// The item's fields are named where they sit in the batch.
		p := problemOf(e)
		p.Errors = make([]apperr.FieldError, len(e.Fields))
		for j, f := range e.Fields {
			if f.Pointer == "/Idempotency-Key" {
				f.Pointer = "/messages/" + strconv.Itoa(i) + "/idempotency_key"
			} else {
				f.Pointer = "/messages/" + strconv.Itoa(i) + "/message" + f.Pointer
			}
			p.Errors[j] = f
		}
		out.Results[i] = batchItem{Status: p.Status, Problem: &p}
	}
	return encode(w, http.StatusOK, out)
}

func (s *Server) getMessage(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	m, err := s.Transactional.Get(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPIMessage(m))
}

func (s *Server) listMessages(w http.ResponseWriter, r *http.Request) error {
	// Newest first pages downwards, with cursors of a listing of its own.
	listing, newest := "messages", false
	switch r.URL.Query().Get("order") {
	case "", "oldest":
	case "newest":
		listing, newest = "messages-newest", true
	default:
		return apperr.Invalidf("/order", "order must be oldest or newest")
	}
	p, err := parsePage(r, listing)
	if err != nil {
		return err
	}
	f := transactional.Filter{Status: queryString(r, "status"), To: queryString(r, "to"), Tag: queryString(r, "tag")}
	var rows []transactional.Message
	if newest {
		rows, err = s.Transactional.ListNewest(r.Context(), accountID(r), p.AfterID, f, p.Limit+1)
	} else {
		rows, err = s.Transactional.List(r.Context(), accountID(r), p.AfterID, f, p.Limit+1)
	}
	if err != nil {
		return err
	}
	rows, next := pageOf(r, listing, p, rows, func(x transactional.Message) cursor { return cursor{ID: x.ID} })
	out := api.MessagePage{Data: make([]api.Message, len(rows)), NextCursor: next}
	for i, x := range rows {
		out.Data[i] = toAPIMessage(x)
	}
	return encode(w, http.StatusOK, out)
}
