package sendonce

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// markdownLink finds inline links and images: [text](target) and ![alt](target).
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinks keeps README.md and docs/ walkable: every relative link names a file that
// exists, and every #anchor names a heading of the page it points at (GitHub's slugs).
// Links to other sites are not followed (these machines are offline).
func TestDocsLinks(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	pages = append(pages, "README.md", "CHANGELOG.md")
	anchors := map[string]map[string]bool{}
	headingsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		body, err := os.ReadFile(page)
		require.NoError(t, err)
		a := map[string]bool{}
		seen := map[string]int{}
		inFence := false
		for _, line := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(line, "```") {
				inFence = !inFence
				continue
			}
			if inFence || !strings.HasPrefix(line, "#") {
				continue
			}
			slug := githubSlug(strings.TrimLeft(line, "# "))
			if n := seen[slug]; n > 0 {
				a[slug+"-"+strconv.Itoa(n)] = true
			} else {
				a[slug] = true
			}
			seen[slug]++
		}
		anchors[page] = a
		return a
	}
	for _, page := range pages {
		body, err := os.ReadFile(page)
		require.NoError(t, err)
		inFence := false
		for i, line := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(line, "```") {
				inFence = !inFence
			}
			if inFence {
				continue
			}
			for _, m := range markdownLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				dest := page
				if file != "" {
					dest = filepath.Join(filepath.Dir(page), file)
					_, err := os.Stat(dest)
					require.NoError(t, err, "%s:%d links to %s, which does not exist", page, i+1, target)
				}
				if anchor != "" && strings.HasSuffix(dest, ".md") {
					require.True(t, headingsOf(dest)[anchor], "%s:%d links to #%s, which is no heading of %s", page, i+1, anchor, dest)
				}
			}
		}
	}
}

// githubSlug is the anchor GitHub gives a heading: lower case, punctuation dropped,
// spaces to hyphens.
func githubSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ' || r == '-':
			b.WriteRune('-')
		case r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}
