package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/text"
)

// Page sizes: a default that suits a dashboard table, and a cap that keeps one
// response bounded (Google AIP-158 asks for a documented default and maximum).
const (
	defaultLimit = 50
	maxLimit     = 500
	// maxCursorLen bounds what decodeCursor will even look at.
	maxCursorLen = 512
)

// cursor is the position after the last row of a page. It is opaque to clients
// (base64url of this JSON) and bound to the account and the listing that made it, so
// it cannot page through another tenant's data or another collection.
type cursor struct {
	Account int64  `json:"a"`
	Listing string `json:"l"`
	ID      int64  `json:"i,omitempty"`
	Key     string `json:"k,omitempty"`
}

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c) // a struct of ints and strings always marshals
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor parses s for the account and listing; any mismatch or damage is a
// 422 on /cursor.
func decodeCursor(s string, accountID int64, listing string) (cursor, error) {
	bad := apperr.Invalidf("/cursor", "cursor is not one this listing returned; start again without it")
	if len(s) > maxCursorLen {
		return cursor{}, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(text.CheckJSON(b)) > 0 {
		return cursor{}, bad
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil {
		return cursor{}, bad
	}
	// The key goes to the database as text: it must be storable text like any input.
	if c.Account != accountID || c.Listing != listing || c.ID < 0 || (c.ID == 0 && c.Key == "") || !text.Valid(c.Key) {
		return cursor{}, bad
	}
	return c, nil
}

// pageRequest is the limit and position of a listing request.
type pageRequest struct {
	Limit   int
	AfterID int64
	// AfterKey is the position of listings keyed by a string (suppressions).
	AfterKey string
}

// parsePage reads ?limit= and ?cursor= (already checked against the spec, checked
// again here so the handler never trusts the middleware alone).
func parsePage(r *http.Request, listing string) (pageRequest, error) {
	p := pageRequest{Limit: defaultLimit}
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := parsePageLimit(s)
		if err != nil {
			return p, err
		}
		p.Limit = n
	}
	if s := r.URL.Query().Get("cursor"); s != "" {
		c, err := decodeCursor(s, accountID(r), listing)
		if err != nil {
			return p, err
		}
		p.AfterID, p.AfterKey = c.ID, c.Key
	}
	return p, nil
}

// parsePageLimit reads a ?limit= value: 1 to maxLimit.
func parsePageLimit(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxLimit {
		return 0, apperr.Invalidf("/limit", "limit must be an integer from 1 to %d", maxLimit)
	}
	return n, nil
}

// pageOf trims rows fetched with limit+1 to the page and returns the cursor of the
// next page, or nil at the end. last gives the position of a row.
func pageOf[T any](r *http.Request, listing string, p pageRequest, rows []T, last func(T) cursor) ([]T, *string) {
	if len(rows) <= p.Limit {
		return rows, nil
	}
	rows = rows[:p.Limit]
	c := last(rows[len(rows)-1])
	c.Account, c.Listing = accountID(r), listing
	s := encodeCursor(c)
	return rows, &s
}
