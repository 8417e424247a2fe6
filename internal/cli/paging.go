package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// paging is the --limit, --cursor and --all of a command that lists one page at a time.
type paging struct {
	limit  int
	cursor string
	all    bool
}

// check refuses a --limit out of range.
func (p paging) check() error {
	if p.limit < 1 || p.limit > 500 {
		return Usage(errors.New("--limit must be 1 to 500"))
	}
	return nil
}

// pages reads the page at --cursor, and with --all every page after it: read answers
// the items of the page after cursor (nil: the first) and the next page's cursor
// (nil or "" at the end). next is the cursor to print for the page after, nil with --all.
func pages[T any](p paging, read func(cursor *string) ([]T, *string, error)) (items []T, next *string, err error) {
	var cursor *string
	if p.cursor != "" {
		cursor = &p.cursor
	}
	for {
		data, n, err := read(cursor)
		if err != nil {
			return nil, nil, err
		}
		items = append(items, data...)
		next = n
		if !p.all || next == nil || *next == "" {
			break
		}
		cursor = next
	}
	if p.all {
		next = nil
	}
	return items, next, nil
}

// printPages prints what pages read: with --json the items as an array (--all) or
// as the API's page (page makes it); else a table, row a line per item, and the
// next page's --cursor on standard error.
func printPages[T any](a *App, cmd *cobra.Command, p paging, items []T, next *string,
	page func([]T, *string) any, header []string, row func(T) []string) error {
	out := cmd.OutOrStdout()
	if a.JSON {
		if items == nil {
			items = []T{}
		}
		if p.all {
			return printJSON(out, items)
		}
		return printJSON(out, page(items, next))
	}
	if err := rowTable(out, items, header, row); err != nil {
		return err
	}
	if next != nil && *next != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "more: --cursor %s\n", *next)
	}
	return nil
}

// everyPage reads every page from the first, as pages does; none is an empty list,
// so --json prints [] rather than null.
func everyPage[T any](read func(cursor *string) ([]T, *string, error)) ([]T, error) {
	items, _, err := pages(paging{all: true}, read)
	if items == nil && err == nil {
		items = []T{}
	}
	return items, err
}

// printList prints items: with --json as an array ([] for none), else a table
// under header, row a line per item.
func printList[T any](a *App, out io.Writer, items []T, header []string, row func(T) []string) error {
	if a.JSON {
		if items == nil {
			items = []T{}
		}
		return printJSON(out, items)
	}
	return rowTable(out, items, header, row)
}

// rowTable is table with a row per item.
func rowTable[T any](out io.Writer, items []T, header []string, row func(T) []string) error {
	rows := make([][]string, 0, len(items))
	for _, it := range items {
		rows = append(rows, row(it))
	}
	return table(out, header, rows)
}
