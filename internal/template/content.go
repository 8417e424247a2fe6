package template

import (
	"encoding/json"
	"strings"

	"github.com/sendonce/sendonce/internal/apperr"
)

// content is what a template's or campaign's body is written in: HTML (and text)
// typed by hand, Markdown, or a block design of the visual builder, the last two
// framed in a layout.
type content struct {
	Type     string
	Markdown string
	Blocks   json.RawMessage
	LayoutID *int64
}

// Source is a body's content type and source (see content).
type Source struct {
	Type     string
	Markdown string
	Blocks   json.RawMessage
	LayoutID *int64
}

// Change is a change of a body's content type, Markdown, design or layout; nil
// keeps a field. HTMLGiven says html or text were given too.
type Change struct {
	Type, Markdown *string
	Blocks         json.RawMessage
	LayoutID       *int64
	HTMLGiven      bool
}

// Composed reports whether html and text are composed from a source (Markdown
// or blocks) rather than the author's.
func Composed(typ string) bool { return typ == "markdown" || typ == "blocks" }

// Content checks a change of content type, Markdown, design and layout on top of
// the current source cur: the result, or a 422 naming the field. A composed body
// takes its html and text from its source, so giving either with it is refused;
// a layout frames composed content only, and a switch to HTML drops it. A
// LayoutID of 0 clears the layout (the account's default applies).
func Content(cur Source, ch Change) (Source, error) {
	c := content(cur)
	err := c.apply(ch)
	return Source(c), err
}

func (c *content) apply(ch Change) error {
	if ch.Type != nil {
		switch *ch.Type {
		case "html", "markdown", "blocks":
		default:
			return apperr.Invalidf("/content_type", "content_type must be html, markdown or blocks")
		}
		if *ch.Type == "html" {
			c.LayoutID = nil
		}
		if *ch.Type != c.Type {
			c.Markdown, c.Blocks = "", nil
		}
		c.Type = *ch.Type
	}
	if ch.Markdown != nil {
		c.Markdown = *ch.Markdown
	}
	if ch.Blocks != nil {
		c.Blocks = ch.Blocks
	}
	if ch.LayoutID != nil {
		c.LayoutID = ch.LayoutID
		if *ch.LayoutID == 0 { // a PATCH's null: back to the account's default layout
			c.LayoutID = nil
		}
	}
	if Composed(c.Type) && ch.HTMLGiven {
		return apperr.Invalidf("/html", "%s content takes its html and text from %s; leave them out", c.Type, c.Type)
	}
	if c.Type != "markdown" && ch.Markdown != nil && *ch.Markdown != "" {
		return apperr.Invalidf("/markdown", "markdown is taken only with content_type markdown")
	}
	if c.Type != "blocks" && ch.Blocks != nil && string(ch.Blocks) != "null" {
		return apperr.Invalidf("/blocks", "blocks are taken only with content_type blocks")
	}
	switch c.Type {
	case "markdown":
		if strings.TrimSpace(c.Markdown) == "" {
			return apperr.Invalidf("/markdown", "markdown must not be empty when content_type is markdown")
		}
	case "blocks":
		if len(c.Blocks) == 0 || string(c.Blocks) == "null" {
			return apperr.Invalidf("/blocks", "blocks (the design) are required when content_type is blocks")
		}
	default:
		if c.LayoutID != nil {
			return apperr.Invalidf("/layout_id", "a layout frames markdown or blocks content; html content carries its own frame")
		}
		c.Markdown, c.Blocks = "", nil
	}
	if c.Type != "blocks" {
		c.Blocks = nil
	}
	return nil
}

// MarkdownError names /markdown in a render error of composed Markdown content,
// whose html and text the author did not write.
func MarkdownError(err error) error { return SourceError("markdown", err) }

// SourceError names the source (/markdown or /blocks) of composed content typ in
// a render error of its html or text, which the author did not write.
func SourceError(typ string, err error) error {
	e, ok := err.(*apperr.Error)
	if !ok || e.Code != apperr.Invalid || !Composed(typ) {
		return err
	}
	out := *e
	out.Fields = make([]apperr.FieldError, len(e.Fields))
	for i, f := range e.Fields {
		switch f.Pointer {
		case "/html", "/text", "/html_template", "/text_template":
			f.Pointer = "/" + typ
		}
		out.Fields[i] = f
	}
	return &out
}
