package optin

import (
	"bytes"
	"html/template"

	"github.com/sendonce/sendonce/internal/unsubscribe"
)

// confirmation is a default confirmation email: templates over {{.Name}} and the
// data {{.Attributes.confirm_url}} and {{.Attributes.lists}} (the lists' names),
// rendered by the message builder like any message.
type confirmation struct{ Subject, Text, HTML string }

// lang is the text of one language: the confirmation email and the pages.
type lang struct {
	Code  string
	Email confirmation
	// Confirm page (GET): title, what is being confirmed, the button.
	ConfirmTitle, ConfirmLists, ConfirmButton string
	// Confirmed page (POST), and the page of a link with nothing left to confirm.
	Confirmed, ConfirmedMore, AlreadyConfirmed string
	// A link that is forged, altered or expired.
	Invalid, InvalidMore string
	// Sign-up answers for form posts.
	Thanks, ThanksConfirm, ThanksDirect string
	ErrorTitle                          string
}

var langs = map[string]lang{
	"en": {
		Code: "en",
		Email: confirmation{
			Subject: "Please confirm your subscription",
			Text: "Hello{{if .Name}} {{.Name}}{{end}},\n\nPlease confirm that you want to receive: {{.Attributes.lists}}.\n\n" +
				"Open this link to confirm:\n{{.Attributes.confirm_url}}\n\nIf you did not ask for this, ignore this email: " +
				"you will not be subscribed.\n",
			HTML: `<p>Hello{{if .Name}} {{.Name}}{{end}},</p><p>Please confirm that you want to receive: {{.Attributes.lists}}.</p>` +
				`<p><a href="{{.Attributes.confirm_url}}">Confirm my subscription</a></p>` +
				`<p>If you did not ask for this, ignore this email: you will not be subscribed.</p>`,
		},
		ConfirmTitle: "Confirm your subscription", ConfirmLists: "You are about to subscribe to:",
		ConfirmButton: "Confirm my subscription",
		Confirmed:     "Your subscription is confirmed.", ConfirmedMore: "Thank you. You can close this page.",
		AlreadyConfirmed: "Your subscription is already confirmed.",
		Invalid:          "This confirmation link is invalid or has expired.",
		InvalidMore:      "Nothing was changed. Sign up again to receive a new link.",
		Thanks:           "Thank you!", ThanksConfirm: "Please check your inbox: we sent you an email to confirm your subscription.",
		ThanksDirect: "Your subscription is recorded.", ErrorTitle: "Your sign-up could not be recorded",
	},
	"fr": {
		Code: "fr",
		Email: confirmation{
			Subject: "Merci de confirmer votre abonnement",
			Text: "Bonjour{{if .Name}} {{.Name}}{{end}},\n\nMerci de confirmer que vous souhaitez recevoir : {{.Attributes.lists}}.\n\n" +
				"Ouvrez ce lien pour confirmer :\n{{.Attributes.confirm_url}}\n\nSi vous n’êtes pas à l’origine de cette demande, " +
				"ignorez cet e-mail : vous ne serez pas abonné(e).\n",
			HTML: `<p>Bonjour{{if .Name}} {{.Name}}{{end}},</p><p>Merci de confirmer que vous souhaitez recevoir : {{.Attributes.lists}}.</p>` +
				`<p><a href="{{.Attributes.confirm_url}}">Confirmer mon abonnement</a></p>` +
				`<p>Si vous n’êtes pas à l’origine de cette demande, ignorez cet e-mail : vous ne serez pas abonné(e).</p>`,
		},
		ConfirmTitle: "Confirmez votre abonnement", ConfirmLists: "Vous allez vous abonner à :",
		ConfirmButton: "Confirmer mon abonnement",
		Confirmed:     "Votre abonnement est confirmé.", ConfirmedMore: "Merci. Vous pouvez fermer cette page.",
		AlreadyConfirmed: "Votre abonnement est déjà confirmé.",
		Invalid:          "Ce lien de confirmation est invalide ou a expiré.",
		InvalidMore:      "Rien n’a été modifié. Inscrivez-vous à nouveau pour recevoir un nouveau lien.",
		Thanks:           "Merci !", ThanksConfirm: "Consultez votre boîte de réception : nous vous avons envoyé un e-mail pour confirmer votre abonnement.",
		ThanksDirect: "Votre abonnement est enregistré.", ErrorTitle: "Votre inscription n’a pas pu être enregistrée",
	},
	"de": {
		Code: "de",
		Email: confirmation{
			Subject: "Bitte bestätigen Sie Ihr Abonnement",
			Text: "Hallo{{if .Name}} {{.Name}}{{end}},\n\nbitte bestätigen Sie, dass Sie Folgendes erhalten möchten: {{.Attributes.lists}}.\n\n" +
				"Öffnen Sie diesen Link zur Bestätigung:\n{{.Attributes.confirm_url}}\n\nWenn Sie das nicht angefordert haben, " +
				"ignorieren Sie diese E-Mail: Sie werden nicht eingetragen.\n",
			HTML: `<p>Hallo{{if .Name}} {{.Name}}{{end}},</p><p>bitte bestätigen Sie, dass Sie Folgendes erhalten möchten: {{.Attributes.lists}}.</p>` +
				`<p><a href="{{.Attributes.confirm_url}}">Abonnement bestätigen</a></p>` +
				`<p>Wenn Sie das nicht angefordert haben, ignorieren Sie diese E-Mail: Sie werden nicht eingetragen.</p>`,
		},
		ConfirmTitle: "Bestätigen Sie Ihr Abonnement", ConfirmLists: "Sie abonnieren:",
		ConfirmButton: "Abonnement bestätigen",
		Confirmed:     "Ihr Abonnement ist bestätigt.", ConfirmedMore: "Vielen Dank. Sie können diese Seite schließen.",
		AlreadyConfirmed: "Ihr Abonnement ist bereits bestätigt.",
		Invalid:          "Dieser Bestätigungslink ist ungültig oder abgelaufen.",
		InvalidMore:      "Es wurde nichts geändert. Melden Sie sich erneut an, um einen neuen Link zu erhalten.",
		Thanks:           "Vielen Dank!", ThanksConfirm: "Bitte sehen Sie in Ihrem Posteingang nach: Wir haben Ihnen eine E-Mail zur Bestätigung geschickt.",
		ThanksDirect: "Ihr Abonnement ist eingetragen.", ErrorTitle: "Ihre Anmeldung konnte nicht gespeichert werden",
	},
}

// langFor picks the texts for a language tag by its primary subtag ("fr-CA" → fr);
// anything else gets English.
func langFor(tag string) lang {
	if l, ok := langs[unsubscribe.PrimaryLanguage(tag)]; ok {
		return l
	}
	return langs["en"]
}

func confirmationFor(tag string) confirmation { return langFor(tag).Email }

// page is plain HTML with no script. The confirm page's only control is a POST
// form to the same URL, so a mail scanner that fetches the link confirms nothing.
var page = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="{{.L.Code}}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{{.Title}}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;line-height:1.5;color:#222}
button{font-size:1.1rem;padding:.7rem 1.4rem;border:0;border-radius:.4rem;cursor:pointer;background:#1a5fb4;color:#fff}
</style>
</head>
<body>
<h1 id="{{.ID}}">{{.Title}}</h1>
{{range .Paragraphs}}<p>{{.}}</p>
{{end}}{{if .Lists}}<ul>
{{range .Lists}}<li>{{.}}</li>
{{end}}</ul>
{{end}}{{if .Button}}<form method="post">
<button type="submit" id="confirm">{{.Button}}</button>
</form>
{{end}}</body>
</html>
`))

type pageData struct {
	L          lang
	ID, Title  string
	Paragraphs []string
	Lists      []string
	Button     string
}

func render(d pageData) []byte {
	var b bytes.Buffer
	if err := page.Execute(&b, d); err != nil {
		panic(err) // a static template over escaped strings cannot fail
	}
	return b.Bytes()
}

// ConfirmPage is the page of GET /p/confirm/{token}: what confirming subscribes
// to, and a button that POSTs.
func ConfirmPage(p Pending) []byte {
	l := langFor(p.Language)
	if len(p.Lists) == 0 {
		return render(pageData{L: l, ID: "confirmed", Title: l.AlreadyConfirmed})
	}
	return render(pageData{L: l, ID: "confirm-title", Title: l.ConfirmTitle, Paragraphs: []string{l.ConfirmLists},
		Lists: p.Lists, Button: l.ConfirmButton})
}

// ConfirmedPage is the answer to a confirmation POST.
func ConfirmedPage(p Pending) []byte {
	l := langFor(p.Language)
	return render(pageData{L: l, ID: "confirmed", Title: l.Confirmed, Paragraphs: []string{l.ConfirmedMore}, Lists: p.Lists})
}

// InvalidLinkPage is the page of a forged, altered or expired link (in English:
// an invalid token says nothing about whose it was).
func InvalidLinkPage() []byte {
	l := langs["en"]
	return render(pageData{L: l, ID: "invalid", Title: l.Invalid, Paragraphs: []string{l.InvalidMore}})
}

// ThanksPage answers a sign-up posted from an HTML form.
func ThanksPage(r Result) []byte {
	l := langFor(r.Language)
	more := l.ThanksDirect
	if r.Confirm {
		more = l.ThanksConfirm
	}
	return render(pageData{L: l, ID: "thanks", Title: l.Thanks, Paragraphs: []string{more}})
}

// ErrorPage answers a form sign-up that was refused, with the reason.
func ErrorPage(detail string) []byte {
	l := langs["en"]
	return render(pageData{L: l, ID: "error", Title: l.ErrorTitle, Paragraphs: []string{detail}})
}
