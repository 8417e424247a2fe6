// Package transactional accepts and reads back single messages (receipts, password
// resets): POST /v1/messages. A message is keyed by its Idempotency-Key for as long
// as it exists: its send row's job_id is message:<account>:<key>, so the same key
// can never make a second message, and the executor sends it through the same
// claim, lease, provider call, ack and rescuer as a campaign's recipients.
package transactional

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/attachment"
	"github.com/sendonce/sendonce/internal/idempotency"
	"github.com/sendonce/sendonce/internal/optional"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/quota"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/suppression"
)

// Categories of message.
const (
	// Transactional messages carry no List-Unsubscribe and are not blocked by an
	// unsubscribe; a hard bounce, a complaint or a manual suppression blocks them.
	Transactional = "transactional"
	// Marketing messages are blocked by every suppression and carry List-Unsubscribe.
	Marketing = "marketing"
)

// Request is a message as the API accepts it.
type Request struct {
	To, ToName              string
	From, FromName, ReplyTo string
	TemplateID              *int64
	Subject, HTML, Text     *string
	Data                    json.RawMessage
	Headers                 map[string]string
	Tags                    []string
	SendAt                  *time.Time
	Category                string
	// SenderID names one of the account's senders; nil: the account's default.
	SenderID *int64
	// PoolID names one of the account's sender pools instead (never with
	// SenderID). Left out of the request hash when nil, so a message accepted
	// before pools could be named keeps its hash.
	PoolID *int64 `json:",omitempty"`
	// MoreReplyTo are Reply-To addresses after ReplyTo; Cc and Bcc copy the
	// message (Bcc only in the envelope). Empty ones are left out of the request
	// hash, so a message accepted before these existed keeps its hash.
	MoreReplyTo []string `json:",omitempty"`
	Cc          []string `json:",omitempty"`
	Bcc         []string `json:",omitempty"`
	// Attachments are files with their content in base64, as the API takes them.
	Attachments []Attachment `json:",omitempty"`
	// TrackClicks rewrites the links the HTML writes literally to signed
	// {public_url}/c/{token} redirects (nil: the template's default, else off);
	// TrackOpens adds the open pixel (nil: off). Left out of the request hash when
	// nil, so a message accepted before these existed keeps its hash.
	TrackClicks *bool `json:",omitempty"`
	TrackOpens  *bool `json:",omitempty"`
	// Markdown is the body instead of HTML and Text: converted and framed in
	// the layout LayoutID (nil: the account's default) when the message is
	// accepted, as a Markdown template is. Left out of the request hash when
	// nil, so a message accepted before these existed keeps its hash.
	Markdown *string `json:",omitempty"`
	LayoutID *int64  `json:",omitempty"`
	// Blocks is a block design instead of HTML and Text (or Markdown), composed
	// in the layout LayoutID as a block template is. Left out of the request
	// hash when nil, as Markdown.
	Blocks json.RawMessage `json:",omitempty"`
}

// Attachment is one file of a request: Resend's fields, content in base64.
type Attachment struct {
	Filename    string
	Content     string
	ContentType string `json:",omitempty"`
	ContentID   string `json:",omitempty"`
}

// AttachmentInfo describes a stored file of a message (not its bytes).
type AttachmentInfo = attachment.Info

// Message is a stored message with the state of its send.
type Message struct {
	ID             int64
	IdempotencyKey string
	// Subject is the subject as accepted: a template, rendered for the recipient
	// when the message is sent.
	Subject        string
	Category       string
	To, ToName     string
	From, FromName string
	ReplyTo        string
	TemplateID     *int64
	SenderID       *int64
	PoolID         *int64
	MoreReplyTo    []string
	Cc, Bcc        []string
	Attachments    []AttachmentInfo
	// TrackClicks and TrackOpens are what the message was accepted with;
	// Engagement counts its hits when either is on (nil otherwise).
	TrackClicks, TrackOpens bool
	Engagement              *Engagement
	Tags                    []string
	SendAt                  *time.Time
	Status                  string
	Attempts                int
	ProviderMessageID       *string
	LastError               *string
	Feedback                *string
	SentAt                  *time.Time
	CreatedAt, UpdatedAt    time.Time
}

// Engagement counts a tracked message's hits: clicks on its links (honeypot hits
// apart) and opens, in total and those not suspected of being bots.
type Engagement struct {
	Clicks, HumanClicks, HoneypotHits, Opens, HumanOpens int64
}

// Service accepts and reads messages.
type Service struct {
	pool *pgxpool.Pool
	b    *render.Builder
	// Erased recognises an erased address a message goes to: it is suppressed
	// again by address (which blocks marketing messages, as an unsubscribe does).
	Erased *suppression.Erased
	// Now is the clock of the messages_per_day quota's UTC day (nil: time.Now).
	Now func() time.Time
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// NewService returns a Service on pool. b builds each message once when it is
// accepted, exactly as the executor will, so content that cannot be sent is
// refused with a 422 instead of failing later.
func NewService(pool *pgxpool.Pool, b *render.Builder) *Service {
	if b == nil {
		b = render.NewRandomBuilder()
	}
	return &Service{pool: pool, b: b}
}

// JobID is the send's idempotency key for a message of account accepted under key.
func JobID(accountID int64, key string) string {
	return "message:" + strconv.FormatInt(accountID, 10) + ":" + key
}

// ErrKeyReused is the error for a key already used by another request body.
var errKeyReused = &apperr.Error{Code: apperr.Invalid,
	Message: "this Idempotency-Key was used for another message; use a new key for a different message",
	Fields:  []apperr.FieldError{{Pointer: "/Idempotency-Key", Detail: "already used with a different request body"}}}

// Send accepts a message of the account's API under key. The same key with the
// same request returns the message stored first (created false), however long
// ago; with another request it is refused (422). Concurrent requests with one key
// make one message: the second insert waits for the first to commit, then finds
// it. A new message takes one from the account's messages_per_day quota, in the
// transaction that stores it (past the quota: DailyQuotaExceeded, nothing stored);
// a retry of a stored one takes nothing.
func (s *Service) Send(ctx context.Context, accountID int64, key string, in Request) (Message, bool, error) {
	return s.send(ctx, accountID, key, in, true)
}

// SendForRecipient is Send for a message the service sends for the account at a
// recipient's own request (the copy of their data): not counted against the
// account's messages_per_day quota, which would otherwise refuse the recipient.
func (s *Service) SendForRecipient(ctx context.Context, accountID int64, key string, in Request) (Message, bool, error) {
	return s.send(ctx, accountID, key, in, false)
}

func (s *Service) send(ctx context.Context, accountID int64, key string, in Request, counted bool) (Message, bool, error) {
	id, found, err := stored(ctx, store.New(s.pool), accountID, key, in)
	if err != nil || found {
		if err != nil {
			return Message{}, false, err
		}
		m, err := s.Get(ctx, accountID, id)
		return m, false, err
	}
	c, err := s.check(ctx, accountID, key, in)
	if err != nil {
		return Message{}, false, err
	}
	created := false
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if id, created, err = insert(ctx, tx, accountID, key, in, c); err != nil || !created {
			return err
		}
		if _, err = s.Erased.Recall(ctx, tx, accountID, strings.ToLower(c.to)); err != nil {
			return err
		}
		if counted {
			// Last, so the account's counter row is locked only until the commit.
			return quota.TakeMessage(ctx, store.New(tx), accountID, s.now())
		}
		return nil
	})
	if err != nil {
		return Message{}, false, postgres.Error(err, "message")
	}
	m, err := s.Get(ctx, accountID, id)
	return m, created, err
}

// SendTx is Send inside the caller's transaction tx, so that the message exists
// exactly when the caller's own change commits (a double opt-in confirmation and
// its pending subscriber). It returns the message's id and whether it was created.
// Such a message is the service's, asked for by a subscriber's sign-up: not
// counted against the messages_per_day quota (the sign-up form's own rate limits
// bound them).
func (s *Service) SendTx(ctx context.Context, tx pgx.Tx, accountID int64, key string, in Request) (int64, bool, error) {
	if id, found, err := stored(ctx, store.New(tx), accountID, key, in); err != nil || found {
		return id, false, err
	}
	c, err := s.check(ctx, accountID, key, in)
	if err != nil {
		return 0, false, err
	}
	id, created, err := insert(ctx, tx, accountID, key, in, c)
	if err == nil && created {
		_, err = s.Erased.Recall(ctx, tx, accountID, strings.ToLower(c.to))
	}
	return id, created, postgres.Error(err, "message")
}

// stored looks the key up before anything is validated: a retry of an accepted
// message answers that message (found) even when what validation reads has
// changed since (its template deleted, its From no longer allowed), because the
// message exists and may be sent, and a refusal would make the client resend it
// under a new key. The same key with another body is errKeyReused. A key not
// yet used goes on to validation and insert, whose ON CONFLICT settles a race
// with a concurrent first request.
func stored(ctx context.Context, q *store.Queries, accountID int64, key string, in Request) (int64, bool, error) {
	if err := checkKey(key); err != nil {
		return 0, false, err
	}
	prev, err := q.MessageByKey(ctx, store.MessageByKeyParams{AccountID: accountID, IdempotencyKey: key})
	if postgres.NoRows(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	if !sameRequest(prev.RequestHash, in) {
		return 0, false, errKeyReused
	}
	return prev.ID, true, nil
}

// insert stores a checked message and its send row in tx and wakes the executors
// on commit; a key already used returns the stored message (or errKeyReused).
func insert(ctx context.Context, tx pgx.Tx, accountID int64, key string, in Request, c checked) (int64, bool, error) {
	hash := requestHash(in)
	q := store.New(tx)
	streamID, err := stream(ctx, q, accountID, in.SenderID, in.PoolID)
	if err != nil {
		return 0, false, err
	}
	headers, err := json.Marshal(c.headers)
	if err != nil {
		return 0, false, err
	}
	mid, err := q.MessageInsert(ctx, store.MessageInsertParams{AccountID: accountID, IdempotencyKey: key,
		RequestHash: hash, Category: c.category, ToEmail: c.to, ToName: in.ToName, FromEmail: c.from,
		FromName: in.FromName, ReplyTo: c.replyTo, Subject: c.subject, Html: c.html, Text: c.text, Data: c.data,
		TemplateID: in.TemplateID, Headers: headers, Tags: c.tags, SendAt: in.SendAt, SenderID: in.SenderID, PoolID: in.PoolID,
		Cc: optional.NonNil(c.cc), Bcc: optional.NonNil(c.bcc), ReplyToMore: optional.NonNil(c.moreReplyTo), AttachmentCount: int16(len(c.attachments)),
		TrackClicks: c.trackClicks, TrackOpens: c.trackOpens})
	if postgres.NoRows(err) {
		prev, err := q.MessageByKey(ctx, store.MessageByKeyParams{AccountID: accountID, IdempotencyKey: key})
		if err != nil {
			return 0, false, err
		}
		if !sameRequest(prev.RequestHash, in) {
			return 0, false, errKeyReused
		}
		return prev.ID, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	if len(c.links) > 0 {
		// The tracked URLs are stored with the message, once: its click tokens name
		// a link by its number and the redirect answers the URL stored here.
		if err := q.MessageLinksInsert(ctx, store.MessageLinksInsertParams{AccountID: accountID, MessageID: mid,
			Urls: c.links}); err != nil {
			return 0, false, err
		}
	}
	if err := attachment.Store(ctx, q, accountID, c.attachments, func(pos int32, a provider.Attachment, sum []byte) error {
		return q.MessageAttachmentInsert(ctx, store.MessageAttachmentInsertParams{MessageID: mid, Position: pos,
			AccountID: accountID, Filename: a.Filename, ContentType: a.ContentType, ContentID: a.ContentID, Sha256: sum})
	}); err != nil {
		return 0, false, err
	}
	if len(c.attachments) == 0 && in.TemplateID != nil {
		// A message made from a template without files of its own gets the
		// template's, as it gets its content: copied now.
		n, err := q.MessageAttachmentCopyTemplate(ctx, store.MessageAttachmentCopyTemplateParams{MessageID: mid,
			AccountID: accountID, TemplateID: *in.TemplateID})
		if err != nil {
			return 0, false, err
		}
		if n > 0 {
			if err := q.MessageSetAttachmentCount(ctx, store.MessageSetAttachmentCountParams{AttachmentCount: int16(n),
				AccountID: accountID, ID: mid}); err != nil {
				return 0, false, err
			}
		}
	}
	if err := q.MessageSendInsert(ctx, store.MessageSendInsertParams{StreamID: streamID, AccountID: accountID,
		MessageID: mid, Email: c.to, JobID: JobID(accountID, key), SendAt: in.SendAt}); err != nil {
		return 0, false, err
	}
	// Wakes the executors on commit, so the message is claimed at once.
	return mid, true, q.CampaignNotify(ctx, store.CampaignNotifyParams{Channel: postgres.CampaignChannel, Payload: strconv.FormatInt(streamID, 10)})
}

// stream returns the account's message stream for a sender or a sender pool
// (both nil: the default stream), creating it with the first message that needs
// it. Each sender's and each pool's messages have a stream of their own, so the
// executor sends them through that sender, within its rate, or through that pool
// with its failover, as it does the campaigns naming them.
func stream(ctx context.Context, q *store.Queries, accountID int64, senderID, poolID *int64) (int64, error) {
	p := store.MessageStreamEnsureParams{AccountID: accountID, SenderID: senderID, PoolID: poolID}
	id, err := q.MessageStreamEnsure(ctx, p)
	if postgres.NoRows(err) {
		// Another transaction created it after this statement's snapshot (or
		// retired it, when its sender or pool was deleted).
		id, err = q.MessageStreamEnsure(ctx, p)
	}
	return id, err
}

// requestHash is the message's idempotency fingerprint: the API's one rule
// (idempotency.Fingerprint), on the request as JSON, so a message sent again with
// its keys reordered — its data's too — is the same message, and a value written
// otherwise is another.
func requestHash(in Request) []byte {
	b, _ := json.Marshal(in) // a struct of strings, maps, slices and raw JSON: cannot fail
	return idempotency.Fingerprint(idempotency.MessageRoute, b)
}

// sameRequest reports whether a stored message's hash is in's. Messages stored
// before the fingerprint was the API's one rule carry the SHA-256 of the request
// as marshalled (data as written); a message is kept for good, so a retry of one
// of them is still recognised.
func sameRequest(stored []byte, in Request) bool {
	if bytes.Equal(stored, requestHash(in)) {
		return true
	}
	b, _ := json.Marshal(in)
	legacy := sha256.Sum256(b)
	return bytes.Equal(stored, legacy[:])
}

// Get returns one message of the account.
func (s *Service) Get(ctx context.Context, accountID, id int64) (Message, error) {
	r, err := store.New(s.pool).MessageGet(ctx, store.MessageGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return Message{}, postgres.Error(err, "message")
	}
	m := fromRow(store.MessageListRow(r))
	if m.Attachments, err = s.attachments(ctx, accountID, id, r.AttachmentCount); err != nil {
		return Message{}, err
	}
	ms := []Message{m}
	if err := s.engagement(ctx, accountID, ms); err != nil {
		return Message{}, err
	}
	return ms[0], nil
}

// engagement fills the Engagement of the tracked messages among ms, in one query.
func (s *Service) engagement(ctx context.Context, accountID int64, ms []Message) error {
	var ids []int64
	at := map[int64]int{}
	for i, m := range ms {
		if m.TrackClicks || m.TrackOpens {
			ids = append(ids, m.ID)
			at[m.ID] = i
			ms[i].Engagement = &Engagement{}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := store.New(s.pool).MessageEngagement(ctx, store.MessageEngagementParams{AccountID: accountID, Ids: ids})
	if err != nil {
		return err
	}
	for _, r := range rows {
		if i, ok := at[r.MessageID]; ok {
			*ms[i].Engagement = Engagement{Clicks: r.Clicks, HumanClicks: r.HumanClicks, HoneypotHits: r.HoneypotHits,
				Opens: r.Opens, HumanOpens: r.HumanOpens}
		}
	}
	return nil
}

// attachments describes the files of a message that has n of them.
func (s *Service) attachments(ctx context.Context, accountID, id int64, n int16) ([]AttachmentInfo, error) {
	if n == 0 {
		return nil, nil
	}
	rows, err := store.New(s.pool).MessageAttachmentMeta(ctx, store.MessageAttachmentMetaParams{AccountID: accountID, MessageID: id})
	if err != nil {
		return nil, err
	}
	out := make([]AttachmentInfo, len(rows))
	for i, a := range rows {
		out[i] = AttachmentInfo{Filename: a.Filename, ContentType: a.ContentType,
			ContentID: a.ContentID, Size: int(a.Size), SHA256: hex.EncodeToString(a.Sha256)}
	}
	return out, nil
}

// Filter narrows a listing; nil fields do not filter.
type Filter struct {
	Status, To, Tag *string
}

// List returns up to limit messages after afterID in id order.
func (s *Service) List(ctx context.Context, accountID, afterID int64, f Filter, limit int) ([]Message, error) {
	rows, err := store.New(s.pool).MessageList(ctx, store.MessageListParams{AccountID: accountID, AfterID: afterID,
		Status: f.Status, ToEmail: f.To, Tag: f.Tag, Lim: int32(limit)})
	if err != nil {
		return nil, err
	}
	return s.listed(ctx, accountID, rows)
}

// ListNewest is List newest first: up to limit messages before beforeID (0: from
// the newest).
func (s *Service) ListNewest(ctx context.Context, accountID, beforeID int64, f Filter, limit int) ([]Message, error) {
	newest, err := store.New(s.pool).MessageListNewest(ctx, store.MessageListNewestParams{AccountID: accountID, BeforeID: beforeID,
		Status: f.Status, ToEmail: f.To, Tag: f.Tag, Lim: int32(limit)})
	if err != nil {
		return nil, err
	}
	rows := make([]store.MessageListRow, len(newest))
	for i, r := range newest {
		rows[i] = store.MessageListRow(r)
	}
	return s.listed(ctx, accountID, rows)
}

// listed makes messages of listed rows, with their attachments and engagement.
func (s *Service) listed(ctx context.Context, accountID int64, rows []store.MessageListRow) ([]Message, error) {
	var err error
	out := make([]Message, len(rows))
	for i, r := range rows {
		out[i] = fromRow(r)
		if out[i].Attachments, err = s.attachments(ctx, accountID, r.ID, r.AttachmentCount); err != nil {
			return nil, err
		}
	}
	if err := s.engagement(ctx, accountID, out); err != nil {
		return nil, err
	}
	return out, nil
}

func fromRow(r store.MessageListRow) Message {
	return Message{ID: r.ID, IdempotencyKey: r.IdempotencyKey, Category: r.Category, To: r.ToEmail, ToName: r.ToName,
		From: r.FromEmail, FromName: r.FromName, ReplyTo: r.ReplyTo, TemplateID: r.TemplateID, SenderID: r.SenderID,
		PoolID: r.PoolID, Tags: r.Tags,
		MoreReplyTo: r.ReplyToMore, Cc: r.Cc, Bcc: r.Bcc, TrackClicks: r.TrackClicks, TrackOpens: r.TrackOpens,
		SendAt: r.SendAt, Status: r.Status, Attempts: int(r.Attempts), ProviderMessageID: r.ProviderMessageID,
		LastError: r.LastError, Feedback: r.Feedback, SentAt: r.SentAt, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Subject: r.Subject}
}
