package client

import (
	"context"
	"iter"
)

// pages walks a cursor-paginated listing: fetch returns one page and the cursor of
// the next (nil or empty at the end). The first error is yielded once and ends it.
func pages[T any](fetch func(cursor *string) ([]T, *string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var cursor *string
		for {
			items, next, err := fetch(cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if next == nil || *next == "" {
				return
			}
			cursor = next
		}
	}
}

// CampaignSends yields the per-recipient sends of campaign id.
func (c *Client) CampaignSends(ctx context.Context, id int64, params ListCampaignSendsParams) iter.Seq2[Send, error] {
	return pages(func(cursor *string) ([]Send, *string, error) {
		params.Cursor = cursor
		resp, err := c.ListCampaignSendsWithResponse(ctx, id, &params)
		if err := Check(resp, err); err != nil {
			return nil, nil, err
		}
		return resp.JSON200.Data, resp.JSON200.NextCursor, nil
	})
}

// SegmentSubscribers yields the subscribers segment id selects now, oldest first
// (each page evaluates the segment's filter again). Their number, exact up to
// 100,000: c.CountSegmentSubscribersWithResponse.
func (c *Client) SegmentSubscribers(ctx context.Context, id int64, params ListSegmentSubscribersParams) iter.Seq2[Subscriber, error] {
	return pages(func(cursor *string) ([]Subscriber, *string, error) {
		params.Cursor = cursor
		resp, err := c.ListSegmentSubscribersWithResponse(ctx, id, &params)
		if err := Check(resp, err); err != nil {
			return nil, nil, err
		}
		return resp.JSON200.Data, resp.JSON200.NextCursor, nil
	})
}

// Suppressions yields every suppressed address.
func (c *Client) Suppressions(ctx context.Context, params ListSuppressionsParams) iter.Seq2[Suppression, error] {
	return pages(func(cursor *string) ([]Suppression, *string, error) {
		params.Cursor = cursor
		resp, err := c.ListSuppressionsWithResponse(ctx, &params)
		if err := Check(resp, err); err != nil {
			return nil, nil, err
		}
		return resp.JSON200.Data, resp.JSON200.NextCursor, nil
	})
}

// Lists yields every list of the account.
func (c *Client) Lists(ctx context.Context, params ListListsParams) iter.Seq2[List, error] {
	return pages(func(cursor *string) ([]List, *string, error) {
		params.Cursor = cursor
		resp, err := c.ListListsWithResponse(ctx, &params)
		if err := Check(resp, err); err != nil {
			return nil, nil, err
		}
		return resp.JSON200.Data, resp.JSON200.NextCursor, nil
	})
}

// AuditLog yields the account's audit entries that params selects, newest first.
func (c *Client) AuditLog(ctx context.Context, params ListAuditLogParams) iter.Seq2[AuditEntry, error] {
	return pages(func(cursor *string) ([]AuditEntry, *string, error) {
		params.Cursor = cursor
		resp, err := c.ListAuditLogWithResponse(ctx, &params)
		if err := Check(resp, err); err != nil {
			return nil, nil, err
		}
		return resp.JSON200.Data, resp.JSON200.NextCursor, nil
	})
}

// Media yields the account's images, newest first.
func (c *Client) Media(ctx context.Context, params ListMediaParams) iter.Seq2[Media, error] {
	return pages(func(cursor *string) ([]Media, *string, error) {
		params.Cursor = cursor
		resp, err := c.ListMediaWithResponse(ctx, &params)
		if err := Check(resp, err); err != nil {
			return nil, nil, err
		}
		return resp.JSON200.Data, resp.JSON200.NextCursor, nil
	})
}
