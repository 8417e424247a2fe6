package unsubscribe

import (
	"bytes"
	"html/template"
	"strings"
)

// texts holds the page in each language we ship. A campaign's language picks one by
// its primary subtag ("fr-CA" → fr); anything else gets English.
var texts = map[string]pageText{
	"en": {
		Lang: "en", Title: "Unsubscribe",
		Question: "Do you want to stop receiving these emails?",
		Button:   "Unsubscribe",
		Done:     "You are unsubscribed.",
		DoneMore: "You will not receive further emails from this sender. You can close this page.",
	},
	"fr": {
		Lang: "fr", Title: "Désabonnement",
		Question: "Voulez-vous ne plus recevoir ces e-mails ?",
		Button:   "Me désabonner",
		Done:     "Vous êtes désabonné(e).",
		DoneMore: "Vous ne recevrez plus d’e-mails de cet expéditeur. Vous pouvez fermer cette page.",
	},
	"de": {
		Lang: "de", Title: "Abmelden",
		Question: "Möchten Sie diese E-Mails nicht mehr erhalten?",
		Button:   "Abmelden",
		Done:     "Sie sind abgemeldet.",
		DoneMore: "Sie erhalten keine weiteren E-Mails von diesem Absender. Sie können diese Seite schließen.",
	},
}

type pageText struct {
	Lang, Title, Question, Button, Done, DoneMore string
}

// page is plain HTML with no script: a form whose button POSTs to the same URL. The
// button has no name, so the body is empty, which POST /u/{token} accepts as the
// user's consent (RFC 8058 requires consent; clicking is it).
var page = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="{{.Lang}}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{{.Title}}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;line-height:1.5;color:#222}
button{font-size:1.1rem;padding:.7rem 1.4rem;border:0;border-radius:.4rem;background:#b00020;color:#fff;cursor:pointer}
</style>
</head>
<body>
{{if .Confirmed}}<h1 id="done">{{.Done}}</h1>
<p>{{.DoneMore}}</p>
{{else}}<h1>{{.Title}}</h1>
<p>{{.Question}}</p>
<form method="post"><button type="submit" id="unsubscribe">{{.Button}}</button></form>
{{end}}</body>
</html>
`))

// textFor picks the page language for a campaign's language tag.
func textFor(lang string) pageText {
	primary, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(lang)), "-")
	primary, _, _ = strings.Cut(primary, "_")
	if t, ok := texts[primary]; ok {
		return t
	}
	return texts["en"]
}

// Page renders the confirmation page (confirmed false) or the "you are unsubscribed"
// page (confirmed true) in the campaign's language.
func Page(lang string, confirmed bool) []byte {
	var b bytes.Buffer
	data := struct {
		pageText
		Confirmed bool
	}{textFor(lang), confirmed}
	if err := page.Execute(&b, data); err != nil {
		panic(err) // a static template over static data cannot fail
	}
	return b.Bytes()
}
