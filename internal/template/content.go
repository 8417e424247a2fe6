package template

import (
	"strings"

	"github.com/sendonce/sendonce/internal/apperr"
)

// content is what a template's or campaign's body is written in: HTML (and text)
// typed by hand, or Markdown framed in a layout.
type content struct {
	Type     string
	Markdown string
	LayoutID *int64
}

// Content checks a change of content type, Markdown and layout on top of the
// current ones (typ, md, layoutID): the result, or a 422 naming the field. A
// Markdown body takes its html and text from the Markdown, so giving either with
// it is refused (htmlGiven); a layout frames Markdown only, and a switch to HTML
// drops it. A newLayout of 0 clears the layout (the account's default applies).
func Content(typ, md string, layoutID *int64, newType, newMarkdown *string, newLayout *int64, htmlGiven bool) (string, string, *int64, error) {
	c := content{Type: typ, Markdown: md, LayoutID: layoutID}
	err := c.apply(newType, newMarkdown, newLayout, htmlGiven)
	return c.Type, c.Markdown, c.LayoutID, err
}

func (c *content) apply(typ, md *string, layoutID *int64, htmlGiven bool) error {
	if typ != nil {
		if *typ != "html" && *typ != "markdown" {
			return apperr.Invalidf("/content_type", "content_type must be html or markdown")
		}
		if *typ == "html" {
			c.Markdown, c.LayoutID = "", nil
		}
		c.Type = *typ
	}
	if md != nil {
		c.Markdown = *md
	}
	// 0 is a PATCH's null: back to the account's default layout.
	if layoutID != nil {
		c.LayoutID = layoutID
		if *layoutID == 0 {
			c.LayoutID = nil
		}
	}
	switch c.Type {
	case "markdown":
		if htmlGiven {
			return apperr.Invalidf("/html", "markdown content takes its html and text from markdown; leave them out")
		}
		if strings.TrimSpace(c.Markdown) == "" {
			return apperr.Invalidf("/markdown", "markdown must not be empty when content_type is markdown")
		}
	default:
		if md != nil && *md != "" {
			return apperr.Invalidf("/markdown", "markdown is taken only with content_type markdown")
		}
		if c.LayoutID != nil {
			return apperr.Invalidf("/layout_id", "a layout frames markdown content; html content carries its own frame")
		}
		c.Markdown = ""
	}
	return nil
}

// MarkdownError names /markdown in a render error of composed Markdown content,
// whose html and text the author did not write.
func MarkdownError(err error) error {
	e, ok := err.(*apperr.Error)
	if !ok || e.Code != apperr.Invalid {
		return err
	}
	out := *e
	out.Fields = make([]apperr.FieldError, len(e.Fields))
	for i, f := range e.Fields {
		switch f.Pointer {
		case "/html", "/text", "/html_template", "/text_template":
			f.Pointer = "/markdown"
		}
		out.Fields[i] = f
	}
	return &out
}
