package subscriber

import (
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/sendonce/sendonce/internal/address"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/optional"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/quota"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/text"
)

// MaxImportRows is the most rows one import request may carry.
const MaxImportRows = 100_000

// Limits of one imported row, the same the API holds single subscribers to
// (openapi.yaml: name maxLength 500; attributes within the 1 MiB body limit).
const (
	MaxNameLength      = 500
	MaxAttributesBytes = 1 << 20
)

// ImportRow is one subscriber of an import. Nil Name or Status keeps an existing
// subscriber's value (a new one gets "" and pending).
type ImportRow struct {
	Line       int
	Email      string
	Name       *string
	Status     *string
	Attributes map[string]any
}

// Rejection is a row the import skipped, and why.
type Rejection struct {
	Line   int
	Email  string
	Reason string
}

// ImportResult is what an import did.
type ImportResult struct {
	Inserted, Updated int64
	Rejected          []Rejection
}

// ParseCSV reads an import in CSV. charset is the charset parameter of the request's
// Content-Type ("" when there is none); DecodeCSV says how it and a byte order mark
// decide the encoding. The header is line 1 and must name an email column; its
// delimiter (comma or semicolon) is sniffed. name, status and attributes (a JSON
// object) are recognised, and any other column becomes a string attribute named
// after its header. A row that cannot be read, or holds a cell that is not valid
// text (NUL, bytes invalid in the encoding), is rejected with its line; a malformed
// header fails the whole request.
func ParseCSV(r io.Reader, charset string) ([]ImportRow, []Rejection, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, err
	}
	doc, enc, err := DecodeCSV(raw, charset)
	if err != nil {
		return nil, nil, err
	}
	cr := csv.NewReader(bytes.NewReader(doc))
	cr.Comma = sniffDelimiter(doc)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return nil, nil, apperr.Invalidf("", "the CSV needs a header line naming an email column")
	}
	cols := make([]string, len(header))
	emailCol := -1
	for i, h := range header {
		if reason := cellReason(h, enc); reason != "" {
			return nil, nil, apperr.Invalidf("", "line 1: column %d of the header %s", i+1, reason)
		}
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		cols[i] = h
		if h == "email" {
			emailCol = i
		}
	}
	if emailCol < 0 {
		return nil, nil, apperr.Invalidf("", "the CSV header has no email column")
	}
	var rows []ImportRow
	var rejected []Rejection
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				rejected = append(rejected, Rejection{Line: pe.StartLine, Reason: "unreadable CSV: " + pe.Err.Error()})
				continue
			}
			return nil, nil, err
		}
		// FieldPos only after a successful Read: a failed one has no fields (found by FuzzImportParsers).
		line, _ := cr.FieldPos(0)
		if len(rows)+len(rejected) >= MaxImportRows {
			return nil, nil, apperr.New(apperr.TooLarge, "an import holds at most %d rows", MaxImportRows)
		}
		row := ImportRow{Line: line, Attributes: map[string]any{}}
		var bad string
		for i, v := range rec {
			if i >= len(cols) {
				bad = fmt.Sprintf("more fields (%d) than the header (%d)", len(rec), len(cols))
				break
			}
			if reason := cellReason(v, enc); reason != "" {
				bad = fmt.Sprintf("column %q %s", cols[i], reason)
				break
			}
			switch cols[i] {
			case "email":
				row.Email = v
			case "name":
				// An empty cell keeps the existing name, as an empty status keeps the status.
				if v != "" {
					row.Name = optional.Of(v)
				}
			case "status":
				if v != "" {
					row.Status = optional.Of(v)
				}
			case "attributes":
				if strings.TrimSpace(v) == "" {
					continue
				}
				if p := text.CheckJSON([]byte(v)); len(p) > 0 {
					bad = fmt.Sprintf("attributes%s %s", p[0].Pointer, p[0].Reason)
					break
				}
				var a map[string]any
				if err := json.Unmarshal([]byte(v), &a); err != nil || a == nil {
					bad = "attributes must be a JSON object"
				}
				for k, x := range a {
					row.Attributes[k] = x
				}
			case "":
			default:
				row.Attributes[cols[i]] = v
			}
		}
		if bad != "" {
			rejected = append(rejected, Rejection{Line: line, Email: row.Email, Reason: bad})
			continue
		}
		rows = append(rows, row)
	}
	return rows, rejected, nil
}

// rowTextReason says why a row holds text that may not be stored ("" when none),
// whichever parser made it.
func rowTextReason(r ImportRow) string {
	if reason := text.Check(r.Email); reason != "" {
		return "email " + reason
	}
	if r.Name != nil {
		if reason := text.Check(*r.Name); reason != "" {
			return "name " + reason
		}
	}
	if r.Status != nil {
		if reason := text.Check(*r.Status); reason != "" {
			return "status " + reason
		}
	}
	return ""
}

// cellReason says why a decoded cell may not be stored ("" when it may).
func cellReason(v, enc string) string {
	switch reason := text.Check(v); reason {
	case "":
		return ""
	case text.ReasonUTF8:
		return "holds bytes that are not valid " + enc
	default:
		return reason
	}
}

// Limits of one batch of an import: each batch is merged in its own transaction,
// so no transaction grows with the file. Every account's event readers wait below
// the oldest running transaction; one import of 100,000 rows in one transaction
// held them all for its whole merge.
const (
	ImportBatchRows  = 4000
	ImportBatchBytes = 1 << 20
)

// ImportConns is how many batches of one import are merged at once, each in its
// own transaction on its own connection, while the rows after them are still
// being validated. Batches of one import never share an address, so they take no
// lock the other waits for; concurrent imports that share addresses lock them in
// address order (SubscriberImportUpsert) whichever batch they are in. An account
// with a subscribers quota merges one batch at a time (quota.Room locks it).
const ImportConns = 2

// Import upserts rows for the account: each row is validated here (rejects are
// reported, not fatal), and the valid ones go in batches of at most
// ImportBatchRows rows (and about ImportBatchBytes of attributes), each bound as
// arrays to one INSERT … ON CONFLICT DO UPDATE (SubscriberImportUpsert) in its own
// transaction, up to ImportConns batches at once. A batch holds rows that agree on
// whether they give a name and a status, so the statement's SET takes those two
// as flags. An import that fails part-way answers the first error and keeps the
// batches that committed: sending it again is safe (an upsert of the same rows),
// and reports those rows as updated. With listID, every imported subscriber joins
// that list (which must be the account's).
func (s *Service) Import(ctx context.Context, accountID int64, rows []ImportRow, rejected []Rejection, listID *int64) (ImportResult, error) {
	if len(rows)+len(rejected) > MaxImportRows {
		return ImportResult{}, apperr.New(apperr.TooLarge, "an import holds at most %d rows", MaxImportRows)
	}
	if listID != nil {
		if _, err := store.New(s.pool).ListGet(ctx, store.ListGetParams{AccountID: accountID, ID: *listID}); err != nil {
			return ImportResult{}, postgres.Error(err, "list")
		}
	}
	m := &merger{s: s, accountID: accountID, listID: listID, res: ImportResult{Rejected: rejected}}
	if m.res.Rejected == nil {
		m.res.Rejected = []Rejection{}
	}
	g, gctx := errgroup.WithContext(ctx)
	batches := make(chan batch)
	for range ImportConns {
		g.Go(func() error {
			for b := range batches {
				if err := m.merge(gctx, b); err != nil {
					return err
				}
			}
			return nil
		})
	}
	g.Go(func() error {
		defer close(batches)
		return m.validate(gctx, rows, batches)
	})
	err := g.Wait()
	slices.SortStableFunc(m.res.Rejected, func(a, b Rejection) int { return cmp.Compare(a.Line, b.Line) })
	return m.res, err
}

// validRow is a row that passed validation, ready to merge. Nil name or status:
// the row did not give it.
type validRow struct {
	line         int
	email, lower string
	name, status *string
	attributes   []byte
}

// batch is rows merged by one statement, in one transaction: rows that agree on
// whether they give a name and a status.
type batch struct {
	nameGiven, statusGiven bool
	rows                   []validRow
	size                   int // bytes of attributes
}

// merger is one import under way: its validation hands batches to the
// ImportConns goroutines that merge them, which add to res.
type merger struct {
	s         *Service
	accountID int64
	listID    *int64
	mu        sync.Mutex
	res       ImportResult
}

// reject records a row the import skips.
func (m *merger) reject(r Rejection) {
	m.mu.Lock()
	m.res.Rejected = append(m.res.Rejected, r)
	m.mu.Unlock()
}

// validate checks rows in order, rejecting the invalid ones and the repeats of an
// earlier address, and sends the valid ones on batches as each batch fills. Rows
// that give a name, a status, both or neither go in four batches of their own.
func (m *merger) validate(ctx context.Context, rows []ImportRow, batches chan<- batch) error {
	firstLine := make(map[string]int, len(rows))
	var open [4]batch
	flush := func(b *batch) error {
		if len(b.rows) == 0 {
			return nil
		}
		select {
		case batches <- *b:
		case <-ctx.Done():
			return ctx.Err()
		}
		b.rows, b.size = nil, 0
		return nil
	}
	for _, r := range rows {
		reject := func(reason string) { m.reject(Rejection{Line: r.Line, Email: r.Email, Reason: reason}) }
		if reason := rowTextReason(r); reason != "" {
			reject(reason)
			continue
		}
		addr, err := address.Parse(r.Email)
		if err != nil {
			reject(err.Error())
			continue
		}
		if r.Name != nil && utf8.RuneCountInString(*r.Name) > MaxNameLength {
			reject(fmt.Sprintf("name is longer than %d characters", MaxNameLength))
			continue
		}
		if r.Status != nil && *r.Status != StatusPending && *r.Status != StatusConfirmed {
			reject("status must be pending or confirmed")
			continue
		}
		if prev, dup := firstLine[addr.Lower]; dup {
			reject(fmt.Sprintf("duplicate of line %d", prev))
			continue
		}
		attrs, err := marshalAttrs(r.Attributes)
		if err != nil {
			reject("attributes must be a JSON object")
			continue
		}
		if p := text.CheckJSON(attrs); len(p) > 0 {
			reject("attributes" + p[0].Pointer + " " + p[0].Reason)
			continue
		}
		if len(attrs) > MaxAttributesBytes {
			reject(fmt.Sprintf("attributes take more than %d bytes as JSON", MaxAttributesBytes))
			continue
		}
		firstLine[addr.Lower] = r.Line
		i := 0
		if r.Name != nil {
			i |= 1
		}
		if r.Status != nil {
			i |= 2
		}
		b := &open[i]
		if len(b.rows) == ImportBatchRows || (len(b.rows) > 0 && b.size+len(attrs) > ImportBatchBytes) {
			if err := flush(b); err != nil {
				return err
			}
		}
		if b.rows == nil {
			*b = batch{nameGiven: r.Name != nil, statusGiven: r.Status != nil,
				rows: make([]validRow, 0, min(ImportBatchRows, len(rows)))}
		}
		b.rows = append(b.rows, validRow{line: r.Line, email: addr.Email, lower: addr.Lower,
			name: r.Name, status: r.Status, attributes: attrs})
		b.size += len(attrs)
	}
	for i := range open {
		if err := flush(&open[i]); err != nil {
			return err
		}
	}
	return nil
}

// merge merges one batch into the account's subscribers, in one transaction.
func (m *merger) merge(ctx context.Context, b batch) error {
	var counts store.SubscriberImportUpsertRow
	var overQuota []Rejection
	err := postgres.InTx(ctx, m.s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		rows := b.rows
		// The subscribers quota: new addresses beyond the room it leaves are
		// taken out of the batch and reported as rejected rows.
		if limit, used, ok, err := quota.Room(ctx, q, m.accountID, quota.Subscribers); err != nil {
			return err
		} else if ok {
			over, err := q.SubscriberImportOverQuota(ctx, store.SubscriberImportOverQuotaParams{
				EmailLowers: lowers(rows), AccountID: m.accountID, Room: int32(min(max(limit-used, 0), int64(len(rows))))})
			if err != nil {
				return err
			}
			if len(over) > 0 {
				drop := make(map[string]bool, len(over))
				for _, l := range over {
					drop[l] = true
				}
				kept := make([]validRow, 0, len(rows))
				for _, r := range rows {
					if !drop[r.lower] {
						kept = append(kept, r)
						continue
					}
					overQuota = append(overQuota, Rejection{Line: r.line, Email: r.email,
						Reason: fmt.Sprintf("quota subscribers reached (limit %d)", limit)})
				}
				rows = kept
			}
		}
		if len(rows) == 0 {
			return nil
		}
		if m.s.Erased != nil {
			if _, err := m.s.Erased.Recall(ctx, tx, m.accountID, lowers(rows)...); err != nil {
				return err
			}
		}
		var err error
		counts, err = q.SubscriberImportUpsert(ctx, upsertParams(m.accountID, m.listID, b, rows))
		return postgres.Error(err, "subscriber")
	})
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.res.Inserted += counts.Inserted
	m.res.Updated += counts.Updated
	m.res.Rejected = append(m.res.Rejected, overQuota...)
	return nil
}

// lowers is the rows' lower-case addresses, in order.
func lowers(rows []validRow) []string {
	l := make([]string, len(rows))
	for i, r := range rows {
		l[i] = r.lower
	}
	return l
}

// upsertParams binds rows of b as SubscriberImportUpsert's arrays: a row without
// a name or status carries the defaults a new subscriber gets ("" and pending).
func upsertParams(accountID int64, listID *int64, b batch, rows []validRow) store.SubscriberImportUpsertParams {
	p := store.SubscriberImportUpsertParams{AccountID: accountID, ListID: listID,
		NameGiven: b.nameGiven, StatusGiven: b.statusGiven,
		Emails: make([]string, len(rows)), EmailLowers: make([]string, len(rows)), Names: make([]string, len(rows)),
		Statuses: make([]string, len(rows)), Attributes: make([]json.RawMessage, len(rows))}
	for i, r := range rows {
		p.Emails[i], p.EmailLowers[i], p.Attributes[i] = r.email, r.lower, r.attributes
		p.Names[i] = optional.Value(r.name)
		p.Statuses[i] = cmp.Or(optional.Value(r.status), StatusPending)
	}
	return p
}
