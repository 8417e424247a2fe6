// Package dashboard serves the web dashboard: a few ES modules and a page,
// embedded in the binary, that call the public API from the same origin. Nothing
// is compiled: the modules are the source, and the one library (Preact with htm)
// is vendored as published, so `make run` needs no Node.js.
package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"strings"
)

//go:embed static
var static embed.FS

// Prefix is where the dashboard lives; its assets are under Prefix + "/assets/".
const Prefix = "/app"

// CSP is the page's Content-Security-Policy: scripts and styles from this origin
// only (no inline script, no eval), API calls to this origin, frames only of this
// origin (the dev inbox's message view), and never framed itself.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// Dashboard serves the page and its assets.
type Dashboard struct {
	// version is a hash of every asset: the assets' URLs carry it, so they can be
	// cached for good, and any change to any file makes new URLs.
	version string
	assets  map[string][]byte
	page    []byte
}

// New reads the embedded files.
func New() *Dashboard {
	d := &Dashboard{assets: map[string][]byte{}}
	entries, err := fs.ReadDir(static, "static")
	if err != nil {
		panic(err) // embedded at build time
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		b, err := static.ReadFile("static/" + e.Name())
		if err != nil {
			panic(err)
		}
		if strings.HasSuffix(e.Name(), ".d.ts") {
			continue // type declarations for tsc (make ts), not served
		}
		if e.Name() == "index.html" {
			d.page = b
			continue
		}
		d.assets[e.Name()] = b
		names = append(names, e.Name())
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		sum := sha256.Sum256(d.assets[n])
		h.Write([]byte(n + "\x00"))
		h.Write(sum[:])
	}
	d.version = hex.EncodeToString(h.Sum(nil))[:16]
	d.page = bytes.ReplaceAll(d.page, []byte("{{ASSETS}}"), []byte(Prefix+"/assets/"+d.version))
	return d
}

// Version is the hash in the assets' URLs.
func (d *Dashboard) Version() string { return d.version }

// Page answers the dashboard page: never cached (it names the current assets).
func (d *Dashboard) Page(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	securityHeaders(h)
	_, _ = w.Write(d.page)
}

// Asset answers one asset of this version, cached for a year; any other version or
// name is not found (an old page asking for old assets reloads).
func (d *Dashboard) Asset(w http.ResponseWriter, r *http.Request, version, name string) bool {
	b, ok := d.assets[name]
	if !ok || version != d.version {
		return false
	}
	h := w.Header()
	switch path.Ext(name) {
	case ".js":
		h.Set("Content-Type", "text/javascript; charset=utf-8")
	case ".css":
		h.Set("Content-Type", "text/css; charset=utf-8")
	default:
		h.Set("Content-Type", "text/plain; charset=utf-8")
	}
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	securityHeaders(h)
	_, _ = w.Write(b)
	return true
}

func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}

// MessageCSP is the policy of a dev inbox message shown in the dashboard's iframe:
// no script, nothing loaded but inline styles and images, links open outside.
const MessageCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data: https: http:; " +
	"form-action 'none'; frame-ancestors 'self'; sandbox allow-popups allow-popups-to-escape-sandbox"

// Message writes a dev inbox message's HTML (MessagePage) for the dashboard's
// sandboxed iframe, under MessageCSP: nothing of it runs.
func (d *Dashboard) Message(w http.ResponseWriter, html string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", MessageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	_, _ = w.Write(MessagePage(html))
}

// MessagePage wraps a message's HTML for the iframe: a base that opens links in a
// new tab (the frame is sandboxed; a link followed inside it would go nowhere).
func MessagePage(html string) []byte {
	var b strings.Builder
	b.WriteString("<!doctype html><base target=\"_blank\">")
	b.WriteString(html)
	return []byte(b.String())
}
