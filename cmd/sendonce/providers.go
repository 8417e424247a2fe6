package main

import (
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/unsubscribe"
)

// unsubscribeLinks returns the executor's link function: signed one-click URLs on
// the public URL, and the mailto address when one is configured.
func unsubscribeLinks(cfg config.Config) (func(accountID, campaignID, subscriberID int64) (string, string), error) {
	signer, err := unsubscribe.NewSigner(cfg.UnsubscribeSecret)
	if err != nil {
		return nil, err
	}
	return signer.Links(cfg.PublicURL, cfg.UnsubscribeMailto), nil
}
