// Package segment is saved subscriber filters: a PostgreSQL jsonpath predicate over
// a subscriber's attributes plus structured filters (status, list membership,
// creation time). A segment narrows a campaign's audience inside the recipient
// build's single INSERT … SELECT; the predicate is always a bound parameter, parsed
// by PostgreSQL as jsonpath, never text spliced into SQL.
package segment

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// DefaultTimeout bounds one segment statement (a preview count or sample) when the
// Service is given none.
const DefaultTimeout = 5 * time.Second

// MaxMatchLen caps the jsonpath text; real predicates are a line or two.
const MaxMatchLen = 2000

// Filter is what a segment selects. Zero values mean "no filter".
type Filter struct {
	// Match is a jsonpath predicate over attributes, e.g. `$.plan == "pro" && $.seats > 5`.
	Match                       string
	Statuses                    []string
	ListIDs                     []int64
	CreatedAfter, CreatedBefore *time.Time
	// Engagement, when not nil, narrows the segment to the people who opened or
	// clicked (or, negated, did not) a campaign or anything within some days.
	Engagement *Engagement
}

// Engagement is a condition on what a person did with the account's mail, read
// from the tracking hits joined to the sends (docs/segments.md).
//
//   - Opened or clicked CampaignID: a hit of that kind on the send of that campaign
//     to the person; within Days: a hit on any send to the person in the last Days
//     days. Exactly one of CampaignID and Days is given.
//   - PeopleOnly counts only hits not suspected of being a scanner or a bot; a click
//     is never the hidden honeypot link.
//   - Negated selects the people who RECEIVED (a send with status sent) that
//     campaign (any mail sent within Days days) and had no such hit: "not opened X"
//     is the resend-to-non-openers audience, never people X was not sent to.
type Engagement struct {
	Kind       string // "opened" or "clicked"
	Negated    bool
	CampaignID *int64
	Days       *int32
	PeopleOnly bool
}

// MaxEngagementDays bounds Engagement.Days (the column's CHECK says the same).
const MaxEngagementDays = 365

// hitKind is the tracking hit kind of an engagement kind.
var hitKind = map[string]string{"opened": "open", "clicked": "click"}

// Params is an Engagement as the segment queries' segment_engaged_* parameters:
// the hit kind (nil: no condition), negated, campaign, days, people only.
func (e *Engagement) Params() (kind *string, negated bool, campaignID *int64, days *int32, peopleOnly bool) {
	if e == nil {
		return nil, false, nil, nil, false
	}
	k := hitKind[e.Kind]
	return &k, e.Negated, e.CampaignID, e.Days, e.PeopleOnly
}

// EngagementOf is the stored engagement columns as an Engagement (nil: none).
func EngagementOf(kind *string, negated bool, campaignID *int64, days *int32, peopleOnly bool) *Engagement {
	if kind == nil {
		return nil
	}
	e := &Engagement{Negated: negated, CampaignID: campaignID, Days: days, PeopleOnly: peopleOnly}
	for k, v := range hitKind {
		if v == *kind {
			e.Kind = k
		}
	}
	return e
}

// Segment is a named, saved Filter of an account.
type Segment struct {
	ID   int64
	Name string
	Filter
	CreatedAt, UpdatedAt time.Time
}

// Service manages segments and previews them.
type Service struct {
	pool *pgxpool.Pool
	// Timeout bounds each preview statement (SET LOCAL statement_timeout).
	Timeout time.Duration
}

// NewService returns a Service on pool whose previews stop after timeout
// (DefaultTimeout when zero).
func NewService(pool *pgxpool.Pool, timeout time.Duration) *Service {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Service{pool: pool, Timeout: timeout}
}

func matchParam(m string) *string {
	if m == "" {
		return nil
	}
	return &m
}

// check normalises f and refuses what cannot be stored; the jsonpath itself is
// left to PostgreSQL (see pgMatchError).
func (s *Service) check(ctx context.Context, accountID int64, f *Filter) error {
	f.Match = strings.TrimSpace(f.Match)
	if len(f.Match) > MaxMatchLen {
		return apperr.Invalidf("/match", "match must be at most %d bytes", MaxMatchLen)
	}
	if f.Match != "" {
		canonical, err := store.New(s.pool).SegmentMatchCanonical(ctx, f.Match)
		if err != nil {
			return matchSyntaxError(pgMatchError(err, s.Timeout), f.Match)
		}
		if name, ok := variable(canonical); ok {
			return apperr.Invalidf("/match",
				"match uses the jsonpath variable $%s; a segment has no variables, compare with a literal value", name)
		}
	}
	if f.Statuses == nil {
		f.Statuses = []string{}
	}
	for i, st := range f.Statuses {
		if st != "pending" && st != "confirmed" && st != "unsubscribed" {
			return apperr.Invalidf("/statuses/"+strconv.Itoa(i), "status must be pending, confirmed or unsubscribed")
		}
	}
	slices.Sort(f.Statuses)
	f.Statuses = slices.Compact(f.Statuses)
	if f.ListIDs == nil {
		f.ListIDs = []int64{}
	}
	if len(f.ListIDs) > 0 {
		owned, err := store.New(s.pool).ListIDsOwned(ctx, store.ListIDsOwnedParams{AccountID: accountID, Ids: f.ListIDs})
		if err != nil {
			return err
		}
		for i, id := range f.ListIDs {
			if !slices.Contains(owned, id) {
				return apperr.Invalidf("/list_ids/"+strconv.Itoa(i), "list %d not found", id)
			}
		}
		slices.Sort(f.ListIDs)
		f.ListIDs = slices.Compact(f.ListIDs)
	}
	if f.CreatedAfter != nil && f.CreatedBefore != nil && !f.CreatedAfter.Before(*f.CreatedBefore) {
		return apperr.Invalidf("/created_before", "created_before must be after created_after")
	}
	return s.checkEngagement(ctx, accountID, f.Engagement)
}

// checkEngagement refuses an engagement condition that is not one of the forms
// Engagement documents, or that names a campaign the account does not have (an
// unknown id and another account's answer alike).
func (s *Service) checkEngagement(ctx context.Context, accountID int64, e *Engagement) error {
	if e == nil {
		return nil
	}
	if _, ok := hitKind[e.Kind]; !ok {
		return apperr.Invalidf("/engagement/kind", "kind must be opened or clicked")
	}
	switch {
	case e.CampaignID == nil && e.Days == nil:
		return apperr.Invalidf("/engagement/campaign_id", "give campaign_id (one campaign) or within_days (any campaign in that many days)")
	case e.CampaignID != nil && e.Days != nil:
		return apperr.Invalidf("/engagement/within_days", "give campaign_id or within_days, not both")
	case e.Days != nil && (*e.Days < 1 || *e.Days > MaxEngagementDays):
		return apperr.Invalidf("/engagement/within_days", "within_days must be 1 to %d", MaxEngagementDays)
	case e.CampaignID != nil:
		owned, err := store.New(s.pool).SegmentCampaignOwned(ctx, store.SegmentCampaignOwnedParams{AccountID: accountID, ID: *e.CampaignID})
		if err != nil {
			return err
		}
		if !owned {
			return apperr.Invalidf("/engagement/campaign_id", "campaign %d not found", *e.CampaignID)
		}
	}
	return nil
}

// variable returns the first jsonpath variable ($name) in a predicate as
// PostgreSQL prints it, where a variable is always $"name", a key always ."key"
// and a string always "…" with backslash escapes: so outside string literals a
// dollar sign directly followed by a quote starts a variable, and any other is the
// root item. Evaluating a variable that was not passed fails (42704) for every row.
func variable(canonical string) (string, bool) {
	inString := false
	for i := 0; i < len(canonical); i++ {
		switch c := canonical[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && c == '$' && i+1 < len(canonical) && canonical[i+1] == '"':
			end := i + 2
			for end < len(canonical) && canonical[end] != '"' {
				if canonical[end] == '\\' {
					end++
				}
				end++
			}
			return canonical[i+2 : min(end, len(canonical))], true
		}
	}
	return "", false
}

// pgMatchError turns PostgreSQL's refusal of the jsonpath (a syntax error, or a
// data exception such as a bad regular expression or a NUL byte) into a 422 on
// /match carrying PostgreSQL's own message, and a cancelled statement into a 422
// saying the predicate took too long. Anything else passes through.
func pgMatchError(err error, timeout time.Duration) error {
	if !postgres.FromServer(err) {
		return err
	}
	switch code := postgres.Code(err); {
	case code == pgerrcode.QueryCanceled:
		e := apperr.Invalidf("/match", "the segment query exceeded the time limit of %s", timeout)
		e.Err = err
		return e
	// UndefinedObject: a jsonpath variable with no value (stored before variables
	// were refused).
	case code == pgerrcode.SyntaxError, code == pgerrcode.UndefinedObject,
		postgres.InClass(code, pgerrcode.DataException),
		postgres.InClass(code, pgerrcode.DependentPrivilegeDescriptorsStillExist):
		e := apperr.Invalidf("/match", "match: %s", postgres.Message(err))
		e.Err = err
		return e
	}
	return err
}

// The parser's messages a match may get (PostgreSQL 15 to 17), each with the token
// it stopped at.
var (
	nearToken   = regexp.MustCompile(`^match: syntax error at or near "(.*)" of jsonpath input$`)
	atEnd       = regexp.MustCompile(`^match: syntax error at end of jsonpath input$`)
	badNumber   = regexp.MustCompile(`^match: trailing junk after numeric literal at or near "(.*)" of jsonpath input$`)
	jsonpathEnd = regexp.MustCompile(` of jsonpath input$`)
)

// howToWrite ends every syntax error: what a predicate looks like.
const howToWrite = `write a comparison as $.key == "value" (two equals signs, text in double quotes), joined with && or ||`

// matchSyntaxError rewrites the parser's refusal of match into words with where
// it is: the character (1-based, counted in characters) the token it stopped at
// starts (its first place in match: the parser says which token, not where), or
// that the predicate ends too early. Other errors pass through.
func matchSyntaxError(err error, match string) error {
	var ae *apperr.Error
	if !errors.As(err, &ae) || len(ae.Fields) != 1 || ae.Fields[0].Pointer != "/match" {
		return err
	}
	at := func(token string) int {
		i := strings.Index(match, token)
		if i < 0 {
			return 0
		}
		return utf8.RuneCountInString(match[:i]) + 1
	}
	detail := ae.Fields[0].Detail
	var words string
	switch m := nearToken.FindStringSubmatch(detail); {
	case m != nil && at(m[1]) > 0:
		words = fmt.Sprintf("match: unexpected %q at character %d; %s", m[1], at(m[1]), howToWrite)
	case m != nil:
		words = fmt.Sprintf("match: unexpected %q; %s", m[1], howToWrite)
	case atEnd.MatchString(detail):
		words = fmt.Sprintf("match: the predicate ends too early, after character %d; %s", utf8.RuneCountInString(match), howToWrite)
	default:
		if m := badNumber.FindStringSubmatch(detail); m != nil && at(m[1]) > 0 {
			words = fmt.Sprintf("match: %q at character %d is not a number; a number is digits (such as 5 or 2.5), text is in double quotes", m[1], at(m[1]))
		} else {
			words = jsonpathEnd.ReplaceAllString(detail, " in the predicate")
		}
	}
	out := apperr.Invalidf("/match", "%s", words)
	out.Err = ae.Err
	return out
}

func checkName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 200 {
		return "", apperr.Invalidf("/name", "name must be 1 to 200 characters")
	}
	return name, nil
}
