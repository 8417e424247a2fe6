package httpapi

import (
	"net/http"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/campaign"
)

// getABTest answers a campaign's A/B test with its report per variant.
func (s *Server) getABTest(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	t, rep, err := s.Campaigns.VariantsReport(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	out := toAPIABTest(t)
	list := make([]api.ABVariantReport, len(rep))
	for i, v := range rep {
		list[i] = api.ABVariantReport{Variant: v.Variant, Recipients: v.Recipients, Sent: v.Sent, Opened: v.Opened,
			Clicked: v.Clicked, OpenRate: v.OpenRate, ClickRate: v.ClickRate, PValue: v.PValue, Leader: v.Leader}
	}
	out.Report = &list
	return encode(w, http.StatusOK, out)
}

// setABTest makes a draft campaign an A/B test (or replaces its test).
func (s *Server) setABTest(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	in, err := decode[api.ABTestInput](w, r, s.bodyLimitOf(r))
	if err != nil {
		return err
	}
	t := campaign.ABTest{Mode: string(in.Mode), TestPercent: in.TestPercent, WaitSeconds: in.WaitSeconds}
	if in.Metric != nil {
		m := string(*in.Metric)
		t.Metric = &m
	}
	for _, v := range in.Variants {
		t.Variants = append(t.Variants, campaign.Variant{Subject: v.Subject, FromName: v.FromName,
			HTMLTemplate: v.HtmlTemplate, TextTemplate: v.TextTemplate, TemplateID: v.TemplateId})
	}
	out, err := s.Campaigns.SetABTest(r.Context(), accountID(r), id, t)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPIABTest(out))
}

// deleteABTest makes a draft campaign an ordinary one again.
func (s *Server) deleteABTest(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := s.Campaigns.ClearABTest(r.Context(), accountID(r), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// chooseWinner records a person's choice of a test's winner, once.
func (s *Server) chooseWinner(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	in, err := decode[api.WinnerRequest](w, r, s.bodyLimitOf(r))
	if err != nil {
		return err
	}
	out, err := s.Campaigns.ChooseWinner(r.Context(), accountID(r), id, in.Variant)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPIABTest(out))
}

func toAPIABTest(t campaign.ABTest) api.ABTest {
	out := api.ABTest{Mode: api.ABTestMode(t.Mode), TestPercent: t.TestPercent, WaitSeconds: t.WaitSeconds,
		Winner: t.Winner, WinnerChosenAt: t.WinnerAt, Variants: make([]api.ABVariant, len(t.Variants))}
	if t.Metric != nil {
		m := api.ABTestMetric(*t.Metric)
		out.Metric = &m
	}
	if t.ChosenBy != nil {
		c := api.ABTestChosenBy(*t.ChosenBy)
		out.ChosenBy = &c
	}
	for i, v := range t.Variants {
		out.Variants[i] = api.ABVariant{Variant: string(rune('A' + i)), Subject: v.Subject, FromName: v.FromName,
			HtmlTemplate: v.HTMLTemplate, TextTemplate: v.TextTemplate, TemplateId: v.TemplateID}
	}
	return out
}
