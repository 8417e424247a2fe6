package render

// TrackForTest runs the per-recipient rewrite of p on body.
func TrackForTest(p *Prepared, body string, click func(int) string) string {
	return p.track(body, Links{Click: click})
}
