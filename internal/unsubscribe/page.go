package unsubscribe

import (
	"bytes"
	"html/template"
	"strings"
)

// texts holds the pages in each language we ship. A campaign's language picks one by
// its primary subtag ("fr-CA" → fr); anything else gets English.
var texts = map[string]pageText{
	"en": {
		Lang: "en", Title: "Email preferences",
		Lists:      "Send me these lists:",
		Save:       "Save preferences",
		Saved:      "Your preferences are saved.",
		Everything: "Unsubscribe from everything",
		Suppressed: "You are unsubscribed from every email of this sender.",
		Done:       "You are unsubscribed.",
		DoneMore:   "You will not receive further emails from this sender. You can close this page.",
		DoneList:   "You are unsubscribed from this list.",
		DoneListMore: "You will still receive the other lists you are subscribed to; " +
			"open the link again to change them. You can close this page.",
		YourData:     "Your data",
		Export:       "Email me my data",
		ExportSent:   "We are sending what this sender keeps about you to your address.",
		Erase:        "Delete my data",
		EraseAsk:     "Delete everything this sender keeps about you? Your address, name and the history of what you were sent are removed, and this cannot be undone. Only a one-way fingerprint of your address is kept, so that you are never emailed again.",
		EraseConfirm: "Yes, delete my data",
		Erased:       "Your data is deleted.",
		ErasedMore:   "This sender keeps nothing about you but a fingerprint of your address that stops further email. You can close this page.",
		EraseLater:   "A message to you is being sent right now. Please try again in a minute.",
	},
	"fr": {
		Lang: "fr", Title: "Préférences e-mail",
		Lists:        "Envoyez-moi ces listes :",
		Save:         "Enregistrer",
		Saved:        "Vos préférences sont enregistrées.",
		Everything:   "Me désabonner de tout",
		Suppressed:   "Vous êtes désabonné(e) de tous les e-mails de cet expéditeur.",
		Done:         "Vous êtes désabonné(e).",
		DoneMore:     "Vous ne recevrez plus d’e-mails de cet expéditeur. Vous pouvez fermer cette page.",
		DoneList:     "Vous êtes désabonné(e) de cette liste.",
		DoneListMore: "Vous recevrez toujours les autres listes ; rouvrez le lien pour les modifier. Vous pouvez fermer cette page.",
		YourData:     "Vos données",
		Export:       "M’envoyer mes données",
		ExportSent:   "Nous envoyons à votre adresse ce que cet expéditeur conserve sur vous.",
		Erase:        "Supprimer mes données",
		EraseAsk:     "Supprimer tout ce que cet expéditeur conserve sur vous ? Votre adresse, votre nom et l’historique des envois sont effacés, sans retour possible. Seule une empreinte à sens unique de votre adresse est gardée, pour ne plus jamais vous écrire.",
		EraseConfirm: "Oui, supprimer mes données",
		Erased:       "Vos données sont supprimées.",
		ErasedMore:   "Cet expéditeur ne garde de vous qu’une empreinte de votre adresse qui bloque tout envoi. Vous pouvez fermer cette page.",
		EraseLater:   "Un message vous est envoyé en ce moment. Réessayez dans une minute.",
	},
	"de": {
		Lang: "de", Title: "E-Mail-Einstellungen",
		Lists:        "Diese Listen möchte ich erhalten:",
		Save:         "Einstellungen speichern",
		Saved:        "Ihre Einstellungen sind gespeichert.",
		Everything:   "Von allem abmelden",
		Suppressed:   "Sie sind von allen E-Mails dieses Absenders abgemeldet.",
		Done:         "Sie sind abgemeldet.",
		DoneMore:     "Sie erhalten keine weiteren E-Mails von diesem Absender. Sie können diese Seite schließen.",
		DoneList:     "Sie sind von dieser Liste abgemeldet.",
		DoneListMore: "Die anderen Listen erhalten Sie weiterhin; öffnen Sie den Link erneut, um sie zu ändern. Sie können diese Seite schließen.",
		YourData:     "Ihre Daten",
		Export:       "Meine Daten per E-Mail senden",
		ExportSent:   "Wir senden Ihnen, was dieser Absender über Sie speichert, an Ihre Adresse.",
		Erase:        "Meine Daten löschen",
		EraseAsk:     "Alles löschen, was dieser Absender über Sie speichert? Ihre Adresse, Ihr Name und der Verlauf der Sendungen werden entfernt, unwiderruflich. Nur ein Einweg-Fingerabdruck Ihrer Adresse bleibt, damit Sie nie wieder E-Mails erhalten.",
		EraseConfirm: "Ja, meine Daten löschen",
		Erased:       "Ihre Daten sind gelöscht.",
		ErasedMore:   "Dieser Absender speichert nur noch einen Fingerabdruck Ihrer Adresse, der weitere E-Mails verhindert. Sie können diese Seite schließen.",
		EraseLater:   "Gerade wird Ihnen eine Nachricht gesendet. Bitte versuchen Sie es in einer Minute erneut.",
	},
}

type pageText struct {
	Lang, Title, Lists, Save, Saved, Everything, Suppressed string
	Done, DoneMore, DoneList, DoneListMore                  string
	// The person's data: a copy sent by email (never shown on the page: whoever
	// holds the link is not necessarily the person), and erasure, confirmed.
	YourData, Export, ExportSent, Erase, EraseAsk, EraseConfirm, Erased, ErasedMore, EraseLater string
}

// page is plain HTML with no script. The preference form POSTs the checked lists
// with action=preferences; the "everything" form POSTs action=everything. Both go to
// the same URL, which also takes the mail client's one-click POST.
var page = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="{{.Lang}}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{{.Title}}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;line-height:1.5;color:#222}
button{font-size:1.1rem;padding:.7rem 1.4rem;border:0;border-radius:.4rem;cursor:pointer}
#save{background:#1a5fb4;color:#fff}#unsubscribe{background:#b00020;color:#fff}
label{display:block;margin:.3rem 0}form{margin:1.5rem 0}
</style>
</head>
<body>
{{if .Erased}}<h1 id="erased">{{.Text.Erased}}</h1>
<p>{{.ErasedMore}}</p>
{{else if .EraseAsk}}<h1>{{.Text.Erase}}</h1>
<p id="erase-ask">{{.Text.EraseAsk}}</p>
<form method="post">
<input type="hidden" name="action" value="erase">
<button type="submit" id="erase-confirm">{{.EraseConfirm}}</button>
</form>
{{else if .Done}}{{if eq .Scope "list"}}<h1 id="done">{{.DoneList}}</h1>
<p>{{.DoneListMore}}</p>
{{else}}<h1 id="done">{{.Text.Done}}</h1>
<p>{{.DoneMore}}</p>
{{end}}{{else}}<h1>{{.Title}}</h1>
{{if .Saved}}<p id="saved">{{.Text.Saved}}</p>
{{end}}{{if .ExportSent}}<p id="export-sent">{{.Text.ExportSent}}</p>
{{end}}{{if .EraseLater}}<p id="erase-later">{{.Text.EraseLater}}</p>
{{end}}{{if .Suppressed}}<p id="suppressed">{{.Text.Suppressed}}</p>
{{end}}{{if .Lists}}<form method="post">
<input type="hidden" name="action" value="preferences">
<p>{{.Text.Lists}}</p>
{{range .Lists}}<label><input type="checkbox" name="list" value="{{.ID}}" id="list-{{.ID}}"{{if .Subscribed}} checked{{end}}> {{.Name}}</label>
{{end}}<button type="submit" id="save">{{$.Save}}</button>
</form>
{{end}}<form method="post">
<input type="hidden" name="action" value="everything">
<button type="submit" id="unsubscribe">{{.Everything}}</button>
</form>
<h2>{{.YourData}}</h2>
<form method="post">
<input type="hidden" name="action" value="export">
<button type="submit" id="export">{{.Export}}</button>
</form>
<form method="post">
<input type="hidden" name="action" value="erase-ask">
<button type="submit" id="erase">{{.Text.Erase}}</button>
</form>
{{end}}</body>
</html>
`))

// textFor picks the page language for a campaign's language tag.
func textFor(lang string) pageText {
	if t, ok := texts[PrimaryLanguage(lang)]; ok {
		return t
	}
	return texts["en"]
}

// PrimaryLanguage is the primary subtag of a language tag, lower case: "fr-CA" and
// "FR_ca" → "fr". The pages pick their texts by it.
func PrimaryLanguage(tag string) string {
	primary, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
	primary, _, _ = strings.Cut(primary, "_")
	return primary
}

type pageData struct {
	pageText
	Text       pageText
	Erased     bool
	EraseAsk   bool
	EraseLater bool
	ExportSent bool
	Done       bool
	Scope      string
	Saved      bool
	Suppressed bool
	Lists      []ListChoice
}

func render(d pageData) []byte {
	d.Text = d.pageText
	var b bytes.Buffer
	if err := page.Execute(&b, d); err != nil {
		panic(err) // a static template over escaped data cannot fail
	}
	return b.Bytes()
}

// PreferencePage renders the page of GET /u/{token} in the campaign's language: the
// recipient's lists as checkboxes and "unsubscribe from everything"; saved adds the
// confirmation after a preference submit.
func PreferencePage(p Preferences, saved bool) []byte {
	return render(pageData{pageText: textFor(p.Language), Saved: saved, Suppressed: p.Suppressed, Lists: p.Lists})
}

// DataPage renders the page after a request about the person's data: the
// question before an erasure (ask), "your data is deleted" (erased), or the
// preference page saying the export is on its way (exportSent) or that an erasure
// must wait for a send in flight (later).
func DataPage(p Preferences, ask, erased, exportSent, later bool) []byte {
	return render(pageData{pageText: textFor(p.Language), EraseAsk: ask, Erased: erased, ExportSent: exportSent,
		EraseLater: later, Suppressed: p.Suppressed, Lists: p.Lists})
}

// ErasedPage renders "your data is deleted" in lang.
func ErasedPage(lang string) []byte { return render(pageData{pageText: textFor(lang), Erased: true}) }

// DonePage renders "you are unsubscribed", from the list or from everything (scope).
func DonePage(lang, scope string) []byte {
	return render(pageData{pageText: textFor(lang), Done: true, Scope: scope})
}
