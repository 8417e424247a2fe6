package render

import (
	"testing"
)

// A plain part renders exactly what text/template renders for it.
func FuzzPlainMatchesTextTemplate(f *testing.F) {
	f.Add("Hi {{.Name}} <{{.Email}}> {{.Attributes.plan}}{{$.Attributes.x}} {{.UnsubscribeURL}} {{.Attributes}}",
		`{"plan":3.5,"x":null,"m":{"a":[1,"b",true]},"big":1e21}`, "Ada")
	f.Add("{{.Attributes.m}} {{ .Attributes.big }} {{- .Attributes.missing -}} !", `{"m":{"b":[1,{"c":null}]},"big":1e21}`, "")
	f.Add("{{.Attributes.s}}", `{"s":"\u0000\ud800x"}`, "\xff")
	f.Add("x", ``, "")
	f.Fuzz(func(t *testing.T, text, attrs, name string) {
		fast, err := Parse("s", "", text)
		if err != nil || fast.plain[partText] == nil {
			return
		}
		slow, err := Parse("s", "", text)
		if err != nil {
			t.Fatal(err)
		}
		slow.plain = [parts]plain{}
		r := Recipient{Email: "a@example.org", Name: name, Attributes: []byte(attrs)}
		got, gotErr := fast.Render(r, "https://x.test/u/T")
		want, wantErr := slow.Render(r, "https://x.test/u/T")
		if (gotErr == nil) != (wantErr == nil) || got != want {
			t.Fatalf("%q with %s:\nplain         %q %v\ntext/template %q %v", text, attrs, got, gotErr, want, wantErr)
		}
	})
}

func TestPlainIsChosenOnlyForPlainParts(t *testing.T) {
	t.Parallel()
	for tpl, want := range map[string]bool{
		"Hi {{.Name}}":                      true,
		"{{$.Attributes.plan}}":             true,
		"{{.Attributes.a.b}}":               false,
		"{{.Name | printf \"%s\"}}":         false,
		"{{if .Name}}x{{end}}":              false,
		"{{$x := .Name}}{{$x}}":             false,
		"{{.Nope}}":                         false, // an error for text/template to report
		"{{printf \"%v\" .}}":               false,
		"{{.Attributes.plan}} {{.Email}} .": true,
	} {
		tp, err := Parse("s", "", tpl)
		if err != nil {
			if want {
				t.Fatalf("%q: %v", tpl, err)
			}
			continue
		}
		if got := tp.plain[partText] != nil; got != want {
			t.Errorf("%q: plain %v, want %v", tpl, got, want)
		}
	}
}

// A plain HTML part (escapers ported from html/template) renders exactly what
// html/template renders for it.
func FuzzPlainHTMLMatchesHTMLTemplate(f *testing.F) {
	f.Add(`<a href="{{.UnsubscribeURL}}?x={{.Attributes.q}}&y=1" title="{{.Name}}">{{.Attributes.plan}} {{.Email}}</a><!-- c -->`,
		`{"q":"a b&c/d?e=%zz%41","plan":"<b>'+\"&\u0000"}`, "Ada \"Lovelace\" <a@b>", "https://x.test/u/T?a=b&c=%20")
	f.Add(`<img src="{{.Attributes.img}}" alt='{{.Attributes.n}}'><p>{{.Attributes}}</p>`,
		`{"img":"javascript:alert(1)","n":3.5e21,"m":{"a":[1,null]}}`, "\xff\xfe", "HTTP://x/%ZZ")
	f.Add(`<a href="mailto:{{.Email}}">{{$.Name}}</a><a href="{{.Attributes.u}}">x</a>`, `{"u":"/relative:path"}`, "", "")
	f.Add(`<script>var x = {{.Name}};</script>`, `{}`, "x", "y")
	f.Add(`<a title={{.Name}}>x</a>`, `{}`, "a b", "y")
	f.Fuzz(func(t *testing.T, html, attrs, name, unsub string) {
		fast, err := Parse("s", html, "")
		if err != nil || fast.plain[partHTML] == nil {
			return
		}
		slow, err := Parse("s", html, "")
		if err != nil {
			t.Fatal(err)
		}
		slow.plain = [parts]plain{}
		r := Recipient{Email: "a@example.org", Name: name, Attributes: []byte(attrs)}
		got, gotErr := fast.Render(r, unsub)
		want, wantErr := slow.Render(r, unsub)
		if (gotErr == nil) != (wantErr == nil) || got != want {
			t.Fatalf("%q with %s, %q, %q:\nplain         %q %v\nhtml/template %q %v", html, attrs, name, unsub, got.HTML, gotErr, want.HTML, wantErr)
		}
	})
}

func TestPlainHTMLIsChosen(t *testing.T) {
	t.Parallel()
	for tpl, want := range map[string]bool{
		`<p>{{.Name}}</p><a href="{{.UnsubscribeURL}}">x</a>`: true,
		`<a href="x?q={{.Attributes.q}}" title="{{.Email}}">`: true,
		`<script>var x = {{.Name}};</script>`:                 false, // a JS escaper
		`<a title={{.Name}}>x</a>`:                            false, // unquoted attribute
		`<p>{{if .Name}}{{.Name}}{{end}}</p>`:                 false,
	} {
		tp, err := Parse("s", tpl, "")
		if err != nil {
			t.Fatalf("%q: %v", tpl, err)
		}
		if got := tp.plain[partHTML] != nil; got != want {
			t.Errorf("%q: plain %v, want %v", tpl, got, want)
		}
	}
}
