package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sendonce/sendonce/client"
)

// dayNames are the API's weekday names in week order (ranges such as fri-mon wrap).
var dayNames = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}

// parseWindow reads --window: DAYS HH:MM-HH:MM [ZONE], where DAYS is a comma list of
// days and ranges ("mon-fri", "mon,wed,fri", "sat-sun"). The API checks the times
// and the zone; this only shapes them.
func parseWindow(v string) (*client.SendWindow, error) {
	parts := strings.Fields(v)
	if len(parts) < 2 || len(parts) > 3 {
		return nil, Usage(fmt.Errorf("--window: want DAYS HH:MM-HH:MM [ZONE], such as 'mon-fri 09:00-17:00 Europe/Berlin'"))
	}
	var days []client.SendWindowDays
	for _, d := range strings.Split(strings.ToLower(parts[0]), ",") {
		from, to, isRange := strings.Cut(d, "-")
		i, j := slices.Index(dayNames, from), slices.Index(dayNames, to)
		if !isRange {
			j = i
		}
		if i < 0 || j < 0 {
			return nil, Usage(fmt.Errorf("--window: %q is not a day or a range of days (mon … sun)", d))
		}
		for k := i; ; k = (k + 1) % 7 {
			if day := client.SendWindowDays(dayNames[k]); !slices.Contains(days, day) {
				days = append(days, day)
			}
			if k == j {
				break
			}
		}
	}
	start, end, ok := strings.Cut(parts[1], "-")
	if !ok {
		return nil, Usage(fmt.Errorf("--window: %q is not HH:MM-HH:MM", parts[1]))
	}
	w := &client.SendWindow{Days: days, Start: start, End: end}
	if len(parts) == 3 {
		w.TimeZone = &parts[2]
	}
	return w, nil
}

// windowText is a window as --window takes it: DAYS HH:MM-HH:MM [ZONE], with
// runs of three days or more written as ranges (mon-fri).
func windowText(w *client.SendWindow) string {
	in := make([]bool, 7)
	for _, d := range w.Days {
		if i := slices.Index(dayNames, string(d)); i >= 0 {
			in[i] = true
		}
	}
	var parts []string
	for i := 0; i < 7; {
		if !in[i] {
			i++
			continue
		}
		j := i
		for j+1 < 7 && in[j+1] {
			j++
		}
		switch {
		case j-i >= 2:
			parts = append(parts, dayNames[i]+"-"+dayNames[j])
		case j > i:
			parts = append(parts, dayNames[i], dayNames[j])
		default:
			parts = append(parts, dayNames[i])
		}
		i = j + 1
	}
	text := strings.Join(parts, ",") + " " + w.Start + "-" + w.End
	if w.TimeZone != nil {
		text += " " + *w.TimeZone
	}
	return text
}
