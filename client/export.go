package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// DownloadSubscribers streams the subscriber export (GET /v1/subscribers/export,
// CSV or NDJSON by params.Format) into w and returns the bytes written. It runs
// without the client's overall timeout: an export of millions of rows takes as
// long as it takes. A response cut off by the server (a failure after the first
// row) is an error, never a short file taken for a whole one.
func (c *Client) DownloadSubscribers(ctx context.Context, params ExportSubscribersParams, w io.Writer) (int64, error) {
	req, err := NewExportSubscribersRequest(strings.TrimRight(c.cfg.URL, "/"), &params)
	if err != nil {
		return 0, err
	}
	req = req.WithContext(ctx)
	resp, err := c.stream.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e := &Error{Status: resp.StatusCode}
		_ = json.NewDecoder(resp.Body).Decode(&e.Problem)
		return 0, e
	}
	n, err := io.Copy(w, resp.Body)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return n, errors.New("sendonce: the export was cut off by the server")
	}
	return n, err
}
