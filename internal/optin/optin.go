// Package optin is the public side of an account's lists: the sign-up form
// (POST /p/{account_public_id}/subscribe) and double opt-in. A sign-up to a double
// opt-in list makes a pending membership and sends a confirmation email through the
// transactional pipeline (one send row, keyed, claimed and acknowledged like any
// message); its signed, expiring link confirms the address. Nothing here is reached
// with an API key: the account comes from its public id or from a signed token.
package optin

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/address"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/event"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/quota"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/suppression"
	"github.com/sendonce/sendonce/internal/text"
	"github.com/sendonce/sendonce/internal/token"
	"github.com/sendonce/sendonce/internal/transactional"
)

// MaxLists bounds the lists one sign-up may name.
const MaxLists = 20

// Options configure a Service.
type Options struct {
	// PublicURL is the base of confirmation links.
	PublicURL string
	// LinkTTL is how long a confirmation link works.
	LinkTTL time.Duration
	// ResendEvery is the least time between two confirmations to one address.
	ResendEvery time.Duration
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// Service signs addresses up to public lists and confirms them.
type Service struct {
	pool     *pgxpool.Pool
	messages *transactional.Service
	signer   *token.Ring
	// erased recognises an erased address signing up again: it is suppressed.
	erased *suppression.Erased
	opts   Options
}

// NewService returns a Service that sends confirmations with messages and signs
// their links with the key ring signer.
func NewService(pool *pgxpool.Pool, messages *transactional.Service, signer *token.Ring, o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.LinkTTL <= 0 {
		o.LinkTTL = 7 * 24 * time.Hour
	}
	if o.ResendEvery <= 0 {
		o.ResendEvery = time.Hour
	}
	o.PublicURL = strings.TrimRight(o.PublicURL, "/")
	return &Service{pool: pool, messages: messages, signer: signer, opts: o, erased: suppression.NewErased(signer)}
}

// Request is one sign-up as the form or a JSON client sends it.
type Request struct {
	Email   string
	Name    string
	ListIDs []int64
}

// Result is what a sign-up may tell the client. It depends on the lists alone,
// never on the address (known, suppressed, already confirmed or recently mailed
// addresses all get the same answer), so the form cannot be used to probe them.
type Result struct {
	// Confirm is true when a list asks for email confirmation (double opt-in).
	Confirm bool
	// Language is the first list's, for the answer page.
	Language string
}

// errNoForm is the answer for a public id that names no account.
var errNoForm = apperr.New(apperr.NotFound, "no such sign-up form")

// checkRequest validates the fields of a sign-up and returns its address and
// de-duplicated lists.
func checkRequest(in Request) (address.Address, []int64, error) {
	if r := text.Check(in.Email); r != "" {
		return address.Address{}, nil, apperr.Invalidf("/email", "email %s", r)
	}
	addr, err := address.Parse(in.Email)
	if err != nil {
		return address.Address{}, nil, apperr.Invalidf("/email", "%s", err.Error())
	}
	if r := text.Check(in.Name); r != "" {
		return address.Address{}, nil, apperr.Invalidf("/name", "name %s", r)
	}
	if len(in.Name) > 200 || strings.ContainsAny(in.Name, "\r\n") {
		return address.Address{}, nil, apperr.Invalidf("/name", "name must be one line of at most 200 bytes")
	}
	if len(in.ListIDs) == 0 {
		return address.Address{}, nil, apperr.Invalidf("/list_ids", "name at least one list to sign up to")
	}
	if len(in.ListIDs) > MaxLists {
		return address.Address{}, nil, apperr.Invalidf("/list_ids", "at most %d lists", MaxLists)
	}
	var ids []int64
	for i, id := range in.ListIDs {
		if id < 1 {
			return address.Address{}, nil, apperr.Invalidf("/list_ids/"+strconv.Itoa(i), "a list id is a positive integer")
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return addr, ids, nil
}

// Signup signs an address up to public lists of the account publicID names. Single
// opt-in lists subscribe it at once; double opt-in lists (and any list the address
// had left: only the address may undo its own opt-out) make a pending membership
// and, at most once per ResendEvery per address, send a confirmation email in the
// same transaction. A suppressed address changes nothing and is sent nothing, and
// gets the same answer. A known subscriber's name and status are never changed
// here, and never downgraded.
func (s *Service) Signup(ctx context.Context, publicID string, in Request) (Result, error) {
	if publicID == "" || len(publicID) > 64 || !text.Valid(publicID) {
		return Result{}, errNoForm
	}
	addr, ids, err := checkRequest(in)
	if err != nil {
		return Result{}, err
	}
	in.Name = strings.TrimSpace(in.Name)
	acct, err := store.New(s.pool).AccountByPublicID(ctx, publicID)
	if err != nil {
		if err = postgres.Error(err, "form"); apperr.Is(err, apperr.NotFound) {
			return Result{}, errNoForm
		}
		return Result{}, err
	}
	var res Result
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		lists, err := q.OptinListsForSignup(ctx, store.OptinListsForSignupParams{AccountID: acct.ID, Ids: ids})
		if err != nil {
			return err
		}
		byID := map[int64]store.OptinListsForSignupRow{}
		for _, l := range lists {
			byID[l.ID] = l
		}
		for i, id := range in.ListIDs {
			if _, ok := byID[id]; !ok {
				// A private list, another account's or none: one answer for all.
				return apperr.Invalidf("/list_ids/"+strconv.Itoa(i), "list %d is not open to sign-up", id)
			}
		}
		res.Language = byID[ids[0]].Language
		for _, l := range lists {
			res.Confirm = res.Confirm || l.Optin == "double"
		}
		if _, err := s.erased.Recall(ctx, tx, acct.ID, addr.Lower); err != nil {
			return err
		}
		suppressed, err := q.SuppressionExists(ctx, store.SuppressionExistsParams{AccountID: acct.ID, Email: addr.Lower})
		if err != nil || suppressed {
			return err
		}
		return s.signup(ctx, tx, acct.ID, addr, in.Name, lists)
	})
	return res, err
}

// signupSource is the status_source of memberships the form makes.
const signupSource = "signup:form"

func (s *Service) signup(ctx context.Context, tx pgx.Tx, accountID int64, addr address.Address, name string,
	lists []store.OptinListsForSignupRow) error {
	q := store.New(tx)
	// The subscribers quota: counted before, refused only when the sign-up would
	// add a subscriber (a known address signs up as before).
	limit, used, limited, err := quota.Room(ctx, q, accountID, quota.Subscribers)
	if err != nil {
		return err
	}
	sub, err := q.OptinSubscriberUpsert(ctx, store.OptinSubscriberUpsertParams{AccountID: accountID,
		Email: addr.Email, EmailLower: addr.Lower, Name: name})
	if err != nil {
		return fmt.Errorf("sign-up subscriber: %w", err)
	}
	if sub.Inserted && limited && used >= limit {
		return quota.Exceeded(quota.Subscribers, limit, used)
	}
	if sub.Inserted {
		if err := event.Emit(ctx, tx, accountID, event.SubscriberCreated, map[string]any{
			"email": sub.Email, "subscriber_id": sub.ID, "status": sub.Status, "source": signupSource}); err != nil {
			return err
		}
	}
	ids := make([]int64, len(lists))
	direct := []int64{}
	for i, l := range lists {
		ids[i] = l.ID
		// An address that unsubscribed from everything confirms by email to come back.
		if l.Optin == "single" && sub.Status != "unsubscribed" {
			direct = append(direct, l.ID)
		}
	}
	changed, err := q.OptinMembershipJoin(ctx, store.OptinMembershipJoinParams{SubscriberID: sub.ID,
		AccountID: accountID, Direct: direct, Source: signupSource, ListIds: ids})
	if err != nil {
		return fmt.Errorf("sign-up memberships: %w", err)
	}
	joined := []int64{}
	for _, m := range changed {
		if m.Status == "subscribed" {
			joined = append(joined, m.ListID)
		}
	}
	if len(joined) > 0 {
		if err := q.OptinSubscriberDirect(ctx, store.OptinSubscriberDirectParams{AccountID: accountID, ID: sub.ID}); err != nil {
			return err
		}
		if err := event.Emit(ctx, tx, accountID, event.SubscriberSubscribed, map[string]any{
			"email": sub.Email, "subscriber_id": sub.ID, "list_ids": joined, "source": signupSource}); err != nil {
			return err
		}
	}
	pending, err := q.OptinPendingLists(ctx, store.OptinPendingListsParams{AccountID: accountID, SubscriberID: sub.ID})
	if err != nil {
		return err
	}
	// The confirmation comes from the first list of this sign-up still pending.
	var from *store.OptinListsForSignupRow
	for i := range lists {
		if lists[i].OptinFromEmail != "" &&
			slices.ContainsFunc(pending, func(p store.OptinPendingListsRow) bool { return p.ID == lists[i].ID }) {
			from = &lists[i]
			break
		}
	}
	if from == nil {
		return nil
	}
	now := s.opts.Now()
	sentAt, err := q.OptinMarkSent(ctx, store.OptinMarkSentParams{Now: &now, AccountID: accountID, ID: sub.ID,
		EverySeconds: s.opts.ResendEvery.Seconds()})
	if err != nil {
		if apperr.Is(postgres.Error(err, ""), apperr.NotFound) {
			return nil // a confirmation went out less than ResendEvery ago
		}
		return err
	}
	return s.sendConfirmation(ctx, tx, accountID, sub.ID, sub.Email, sub.Name, *from, pending, *sentAt)
}

// sendConfirmation queues the confirmation email in tx. Its Idempotency-Key names
// the subscriber and the instant optin_sent_at moved to, so it is deterministic and
// a second confirmation can only come from a later compare-and-set.
func (s *Service) sendConfirmation(ctx context.Context, tx pgx.Tx, accountID, subscriberID int64, email, name string,
	l store.OptinListsForSignupRow, pending []store.OptinPendingListsRow, sentAt time.Time) error {
	names := make([]string, len(pending))
	for i, p := range pending {
		names[i] = p.Name
	}
	link := s.opts.PublicURL + "/p/confirm/" + s.token(accountID, subscriberID, sentAt.Add(s.opts.LinkTTL))
	data, err := jsonObject(map[string]any{"confirm_url": link, "lists": strings.Join(names, ", ")})
	if err != nil {
		return err
	}
	req := transactional.Request{To: email, ToName: mailName(name), From: l.OptinFromEmail, FromName: l.OptinFromName,
		Data: data, Category: transactional.Transactional, Tags: []string{"optin"}}
	if l.OptinTemplateID != nil {
		req.TemplateID = l.OptinTemplateID
	} else {
		c := confirmationFor(l.Language)
		req.Subject, req.Text, req.HTML = &c.Subject, &c.Text, &c.HTML
	}
	key := "optin:" + strconv.FormatInt(subscriberID, 10) + ":" + strconv.FormatInt(sentAt.UnixMicro(), 10)
	if _, _, err := s.messages.SendTx(ctx, tx, accountID, key, req); err != nil {
		return fmt.Errorf("confirmation message: %w", err)
	}
	return nil
}
