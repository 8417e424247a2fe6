package render

import (
	"bytes"
	"errors"
)

// TrackForTest runs the per-recipient rewrite of p on body.
func TrackForTest(p *Prepared, body string, click func(int) string) string {
	return p.track(body, Links{Click: click})
}

// RenderIntoForTest renders the parts of t, which must all be static or plain,
// for rc into buf (reset first): Render's work without the string it returns,
// which is what writing straight into a reused transport buffer would cost.
func RenderIntoForTest(t *Templates, buf *bytes.Buffer, rc Recipient, unsubscribeURL string) error {
	d := Data{Email: rc.Email, Name: rc.Name, UnsubscribeURL: unsubscribeURL}
	if t.usesAttrs {
		attrs, err := decodeAttrs(rc.Attributes, t.attrKeys)
		if err != nil {
			return err
		}
		d.Attributes = attrs
	}
	buf.Reset()
	for i := range parts {
		if t.static[i] != nil {
			buf.WriteString(*t.static[i])
			continue
		}
		if t.plain[i] == nil {
			return errors.New("not plain")
		}
		if err := t.plain[i].execute(&limitWriter{w: buf, left: maxOutput[i]}, &d); err != nil {
			return err
		}
	}
	return nil
}
