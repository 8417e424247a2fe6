package idempotency

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
)

// MessageRoute is the route of a transactional message's fingerprint: a message
// sent alone (POST /v1/messages) or as an item of a batch is the same request.
const MessageRoute = "POST /v1/messages"

// Fingerprint is what makes two requests under one Idempotency-Key the same
// request: the route (method and request URI) and the body as canonical JSON —
// object keys sorted, insignificant whitespace removed, strings re-escaped one
// way, numbers kept as written (10.50 and 10.5 differ). A body that is not JSON
// (a CSV import) counts byte for byte. Every Idempotency-Key in the API, the
// response store's and the messages' own, compares with this (openapi.yaml,
// Idempotency-Key).
func Fingerprint(route string, body []byte) []byte {
	h := sha256.New()
	_, _ = io.WriteString(h, route+"\n")
	if c, err := Canonical(body); err == nil {
		_, _ = io.WriteString(h, "json\n")
		h.Write(c)
	} else {
		_, _ = io.WriteString(h, "raw\n")
		h.Write(body)
	}
	return h.Sum(nil)
}

// Canonical returns b, one JSON value, in canonical form: objects' keys sorted
// (a key given twice keeps its last value, as decoding does), no insignificant
// whitespace, numbers as written. It fails when b is not exactly one JSON value.
func Canonical(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // json.Number keeps the literal: numbers re-encode as written
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("idempotency: more than one JSON value")
	}
	// encoding/json writes maps with sorted keys and no whitespace.
	return json.Marshal(v)
}
