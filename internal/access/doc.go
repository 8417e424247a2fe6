package access

import (
	"sort"
	"strings"
)

// MatrixMarkdown is the role → permission matrix as a Markdown table: what
// docs/teams.md shows, and a test holds it to this package's matrix.
func MatrixMarkdown() string {
	var b strings.Builder
	b.WriteString("| permission | " + strings.Join(Roles, " | ") + " |\n")
	b.WriteString("|---" + strings.Repeat("|:-:", len(Roles)) + "|\n")
	for _, p := range All {
		b.WriteString("| `" + string(p) + "` |")
		for _, r := range Roles {
			if matrix[r][p] {
				b.WriteString(" ✓ |")
			} else {
				b.WriteString("   |")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// RoutesMarkdown is the route → permission table (public routes left out) as
// Markdown, with each write's audit action.
func RoutesMarkdown() string {
	keys := make([]string, 0, len(Routes))
	for k, rule := range Routes {
		if rule.Permission != "" {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		mi, pi, _ := strings.Cut(keys[i], " ")
		mj, pj, _ := strings.Cut(keys[j], " ")
		if pi != pj {
			return pi < pj
		}
		return mi < mj
	})
	var b strings.Builder
	b.WriteString("| route | permission | audit action |\n|---|---|---|\n")
	for _, k := range keys {
		rule := Routes[k]
		action := ""
		if rule.Action != "" {
			action = "`" + rule.Action + "`"
		}
		b.WriteString("| `" + k + "` | `" + string(rule.Permission) + "` | " + action + " |\n")
	}
	return b.String()
}
