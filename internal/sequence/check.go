package sequence

import (
	"context"
	"fmt"
	"net/mail"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/sendwindow"
	"github.com/sendonce/sendonce/internal/store"
)

// attributeName is what a date_attribute trigger may name (it becomes a jsonpath key).
var attributeName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// ParseDuration reads a wait: a Go duration (90m, 72h) or whole days (3d),
// positive and at most 366 days.
func ParseDuration(s string) (time.Duration, error) {
	var d time.Duration
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (90m, 72h, 3d)", s)
		}
		d = time.Duration(days) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("%q is not a duration (90m, 72h, 3d)", s)
		}
	}
	if d <= 0 || d > maxWait {
		return 0, fmt.Errorf("%q must be positive and at most 366 days", s)
	}
	return d, nil
}

// parseClock reads HH:MM.
func parseClock(s string) (h, m int, err error) {
	t, err := time.Parse("15:04", s)
	if err != nil || len(s) != 5 {
		return 0, 0, fmt.Errorf("%q is not a time of day (HH:MM)", s)
	}
	return t.Hour(), t.Minute(), nil
}

func text(field, v string, max int) error {
	if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
		return apperr.Invalidf(field, "must be valid UTF-8 without NUL")
	}
	if utf8.RuneCountInString(v) > max {
		return apperr.Invalidf(field, "must be at most %d characters", max)
	}
	return nil
}

// check normalises d and refuses what cannot run, naming the field; every id it
// names must be the account's (another account's id is as unknown as a made-up one).
func (s *Service) check(ctx context.Context, accountID int64, d *Definition) error {
	d.Name = strings.TrimSpace(d.Name)
	if d.Name == "" {
		return apperr.Invalidf("/name", "name is required")
	}
	if err := text("/name", d.Name, 200); err != nil {
		return err
	}
	switch d.Trigger.Type {
	case TriggerManual, TriggerEvent:
	case TriggerListJoined, TriggerConfirmed:
		if d.Trigger.ListID == nil {
			return apperr.Invalidf("/trigger/list_id", "a %s trigger needs list_id", d.Trigger.Type)
		}
	case TriggerDate:
		if !attributeName.MatchString(d.Trigger.Attribute) {
			return apperr.Invalidf("/trigger/attribute", "a date_attribute trigger needs the attribute's name (letters, digits, _)")
		}
		if d.Trigger.OffsetDays < -366 || d.Trigger.OffsetDays > 366 {
			return apperr.Invalidf("/trigger/offset_days", "must be from -366 to 366")
		}
		if d.Trigger.At != "" {
			if _, _, err := parseClock(d.Trigger.At); err != nil {
				return apperr.Invalidf("/trigger/at", "%v", err)
			}
		}
	case TriggerSegment:
		if d.Trigger.SegmentID == nil {
			return apperr.Invalidf("/trigger/segment_id", "a segment_entered trigger needs segment_id")
		}
	default:
		return apperr.Invalidf("/trigger/type", "must be one of manual, list_joined, confirmed, event, date_attribute, segment_entered")
	}
	if d.Trigger.Type != TriggerSegment && d.Trigger.SegmentID != nil {
		return apperr.Invalidf("/trigger/segment_id", "only a segment_entered trigger names a segment")
	}
	if d.Trigger.Type != TriggerDate {
		if d.Trigger.Attribute != "" {
			return apperr.Invalidf("/trigger/attribute", "only a date_attribute trigger names an attribute")
		}
		if d.Trigger.OffsetDays != 0 || d.Trigger.At != "" {
			field := "/trigger/at"
			if d.Trigger.OffsetDays != 0 {
				field = "/trigger/offset_days"
			}
			return apperr.Invalidf(field, "only a date_attribute trigger has %s", field[len("/trigger/"):])
		}
	}
	if d.Trigger.Type == TriggerEvent {
		d.Trigger.Event = strings.TrimSpace(d.Trigger.Event)
		if d.Trigger.Event == "" {
			return apperr.Invalidf("/trigger/event", "an event trigger needs the event's name")
		}
	} else if d.Trigger.Event != "" {
		return apperr.Invalidf("/trigger/event", "only an event trigger names an event")
	}
	if err := text("/trigger/event", d.Trigger.Event, 200); err != nil {
		return err
	}
	if d.TimeZone == "" {
		d.TimeZone = "UTC"
	}
	if !sendwindow.ValidZone(d.TimeZone) {
		return apperr.Invalidf("/time_zone", "%q is not an IANA time zone", d.TimeZone)
	}
	if d.SendWindow != nil {
		if err := d.SendWindow.Check("/send_window"); err != nil {
			return err
		}
	}
	if d.LateAfterText != "" {
		late, err := ParseDuration(d.LateAfterText)
		if err != nil {
			return apperr.Invalidf("/late_after", "%v", err)
		}
		d.LateAfter = late
	}
	switch d.Reentry {
	case "", ReentryNever:
		d.Reentry = ReentryNever
		if d.ReentryAfterText != "" {
			return apperr.Invalidf("/reentry_after", "only a sequence with reentry after_exit has reentry_after")
		}
	case ReentryAfterExit:
		// Re-entry needs a trigger that happens, each time anew: an event, an explicit
		// enrollment. A list, segment or date trigger describes a state that holds
		// (or a window a sweep looks at again), so it would restart the sequence on
		// every look.
		if d.Trigger.Type != TriggerEvent && d.Trigger.Type != TriggerManual {
			return apperr.Invalidf("/reentry", "re-entry needs an event or manual trigger")
		}
	default:
		return apperr.Invalidf("/reentry", "must be never or after_exit")
	}
	d.ReentryAfter = 0
	if d.ReentryAfterText != "" {
		gap, err := ParseDuration(d.ReentryAfterText)
		if err != nil {
			return apperr.Invalidf("/reentry_after", "%v", err)
		}
		d.ReentryAfter = gap
	}
	if len(d.Steps) == 0 {
		return apperr.Invalidf("/steps", "a sequence needs at least one step")
	}
	if len(d.Steps) > MaxSteps {
		return apperr.Invalidf("/steps", "at most %d steps", MaxSteps)
	}
	var templates, senders, segments, lists []int64
	if d.Trigger.ListID != nil {
		lists = append(lists, *d.Trigger.ListID)
	}
	if d.Trigger.SegmentID != nil {
		segments = append(segments, *d.Trigger.SegmentID)
	}
	for i := range d.Steps {
		st := &d.Steps[i]
		f := func(name string) string { return fmt.Sprintf("/steps/%d/%s", i, name) }
		if err := checkStep(st, f); err != nil {
			return err
		}
		if st.Type == StepSend {
			templates = append(templates, st.TemplateID)
			if st.SenderID != nil {
				senders = append(senders, *st.SenderID)
			}
		}
		if st.If != nil {
			if st.If.InSegment != nil {
				segments = append(segments, *st.If.InSegment)
			}
			if st.If.LeftList != nil {
				lists = append(lists, *st.If.LeftList)
			}
			if st.If.Data != "" {
				canonical, err := store.New(s.pool).SequenceJsonpathCheck(ctx, st.If.Data)
				if err != nil {
					if postgres.FromServer(err) {
						return apperr.Invalidf(f("if/data"), "data: %s", postgres.Message(err))
					}
					return err
				}
				st.If.Data = canonical
			}
		}
	}
	owned, err := store.New(s.pool).SequenceOwned(ctx, store.SequenceOwnedParams{AccountID: accountID,
		TemplateIds: templates, SenderIds: senders, SegmentIds: segments, ListIds: lists})
	if err != nil {
		return err
	}
	if d.Trigger.ListID != nil && !slices.Contains(owned.Lists, *d.Trigger.ListID) {
		return apperr.Invalidf("/trigger/list_id", "no such list")
	}
	if d.Trigger.SegmentID != nil && !slices.Contains(owned.Segments, *d.Trigger.SegmentID) {
		return apperr.Invalidf("/trigger/segment_id", "no such segment")
	}
	for i, st := range d.Steps {
		f := func(name string) string { return fmt.Sprintf("/steps/%d/%s", i, name) }
		if st.Type == StepSend && !slices.Contains(owned.Templates, st.TemplateID) {
			return apperr.Invalidf(f("template_id"), "no such template")
		}
		if st.SenderID != nil && !slices.Contains(owned.Senders, *st.SenderID) {
			return apperr.Invalidf(f("sender_id"), "no such sender")
		}
		if st.PoolID != nil && *st.PoolID < 1 {
			return apperr.Invalidf(f("pool_id"), "sender pool %d not found", *st.PoolID)
		}
		if err := sender.CheckPool(ctx, store.New(s.pool), accountID, st.SenderID, st.PoolID, f("pool_id")); err != nil {
			return err
		}
		if st.If != nil && st.If.InSegment != nil && !slices.Contains(owned.Segments, *st.If.InSegment) {
			return apperr.Invalidf(f("if/in_segment"), "no such segment")
		}
		if st.If != nil && st.If.LeftList != nil && !slices.Contains(owned.Lists, *st.If.LeftList) {
			return apperr.Invalidf(f("if/left_list"), "no such list")
		}
		if st.If != nil && st.If.Clicked != nil {
			k := st.If.Clicked.Step
			if k < 0 || k >= i || d.Steps[k].Type != StepSend {
				return apperr.Invalidf(f("if/clicked/step"), "must be the position of an earlier send step")
			}
		}
	}
	return nil
}

// checkStep checks what one step says on its own (not the ids it names).
func checkStep(st *Step, f func(string) string) error {
	for name, v := range map[string]string{"from_email": st.FromEmail, "from_name": st.FromName, "reply_to": st.ReplyTo,
		"event": st.Event} {
		if err := text(f(name), v, 320); err != nil {
			return err
		}
	}
	only := func(allowed ...string) error {
		set := map[string]bool{"template_id": st.TemplateID != 0, "sender_id": st.SenderID != nil, "pool_id": st.PoolID != nil,
			"from_email": st.FromEmail != "", "from_name": st.FromName != "", "reply_to": st.ReplyTo != "",
			"duration": st.Duration != "", "at": st.At != "", "weekdays": len(st.Weekdays) > 0, "if": st.If != nil,
			"event": st.Event != "", "timeout": st.Timeout != "", "on_event": st.OnEvent != "", "on_timeout": st.OnTimeout != ""}
		for name, on := range set {
			if on && !slices.Contains(allowed, name) {
				return apperr.Invalidf(f(name), "a %s step has no %s", st.Type, name)
			}
		}
		return nil
	}
	switch st.Type {
	case StepSend:
		if err := only("template_id", "sender_id", "pool_id", "from_email", "from_name", "reply_to"); err != nil {
			return err
		}
		if st.TemplateID <= 0 {
			return apperr.Invalidf(f("template_id"), "a send step needs template_id")
		}
		if _, err := mail.ParseAddress(st.FromEmail); err != nil || !strings.Contains(st.FromEmail, "@") {
			return apperr.Invalidf(f("from_email"), "a send step needs a from_email address")
		}
		if st.ReplyTo != "" {
			if _, err := mail.ParseAddress(st.ReplyTo); err != nil {
				return apperr.Invalidf(f("reply_to"), "not an email address")
			}
		}
	case StepWait:
		if err := only("duration", "at", "weekdays"); err != nil {
			return err
		}
		if st.Duration == "" && st.At == "" && len(st.Weekdays) == 0 {
			return apperr.Invalidf(f("duration"), "a wait step needs duration, at or weekdays")
		}
		if st.Duration != "" {
			if _, err := ParseDuration(st.Duration); err != nil {
				return apperr.Invalidf(f("duration"), "%v", err)
			}
		}
		if st.At != "" {
			if _, _, err := parseClock(st.At); err != nil {
				return apperr.Invalidf(f("at"), "%v", err)
			}
		}
		for j, w := range st.Weekdays {
			if _, ok := sendwindow.Weekdays[w]; !ok {
				return apperr.Invalidf(fmt.Sprintf("%s/%d", f("weekdays"), j), "%q is not a weekday (mon … sun)", w)
			}
		}
	case StepCondition:
		if err := only("if"); err != nil {
			return err
		}
		c := st.If
		if c == nil {
			return apperr.Invalidf(f("if"), "a condition step needs if")
		}
		n := 0
		for _, on := range []bool{c.InSegment != nil, c.LeftList != nil, c.Data != "", c.Clicked != nil} {
			if on {
				n++
			}
		}
		if n != 1 {
			return apperr.Invalidf(f("if"), "if needs exactly one of in_segment, left_list, data, clicked")
		}
		if err := text(f("if/data"), c.Data, 1000); err != nil {
			return err
		}
	case StepWaitForEvent:
		if err := only("event", "timeout", "on_event", "on_timeout"); err != nil {
			return err
		}
		st.Event = strings.TrimSpace(st.Event)
		if st.Event == "" {
			return apperr.Invalidf(f("event"), "a wait_for_event step needs event")
		}
		if utf8.RuneCountInString(st.Event) > 200 {
			return apperr.Invalidf(f("event"), "must be at most 200 characters")
		}
		if _, err := ParseDuration(st.Timeout); err != nil {
			return apperr.Invalidf(f("timeout"), "a wait_for_event step needs a timeout: %v", err)
		}
		for name, v := range map[string]string{"on_event": st.OnEvent, "on_timeout": st.OnTimeout} {
			if v != "" && v != "continue" && v != "exit" {
				return apperr.Invalidf(f(name), "must be continue or exit")
			}
		}
	default:
		return apperr.Invalidf(f("type"), "must be one of send, wait, condition, wait_for_event")
	}
	return nil
}
