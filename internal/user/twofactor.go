package user

import (
	"context"
	"crypto/rand"
	"strconv"
	"strings"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/store"
)

// Enrolment is a TOTP secret offered to a user, not yet confirmed.
type Enrolment struct {
	// Secret is the key in base32, for typing into an authenticator app.
	Secret string
	// URL is the otpauth:// URI of the same key, for a QR code.
	URL string
}

// totpAAD binds a sealed secret to its user: copied to another user's row, it
// does not decrypt.
func totpAAD(userID int64) []byte {
	return []byte("sendonce totp user " + strconv.FormatInt(userID, 10))
}

// StartTOTP makes a new TOTP secret for the user, sealed at rest. It does nothing
// until ConfirmTOTP receives a first code of it. A user who has a confirmed second
// factor gets 409 (remove it first).
func (s *Service) StartTOTP(ctx context.Context, userID int64) (Enrolment, error) {
	q := store.New(s.pool)
	u, err := q.UserGet(ctx, userID)
	if err != nil {
		return Enrolment{}, err
	}
	key := make([]byte, totpSecretLen)
	_, _ = rand.Read(key)
	keyID, sealed, err := s.ring.Seal(key, totpAAD(userID))
	if err != nil {
		return Enrolment{}, apperr.New(apperr.Conflict, "a second factor needs SENDONCE_SECRETS_KEY, which is not set")
	}
	n, err := q.UserTOTPStart(ctx, store.UserTOTPStartParams{ID: userID, KeyID: &keyID, Sealed: sealed})
	if err != nil {
		return Enrolment{}, err
	}
	if n == 0 {
		return Enrolment{}, apperr.New(apperr.Conflict, "a second factor is already set up; remove it first")
	}
	return Enrolment{Secret: b32.EncodeToString(key), URL: otpauthURL("sendonce", u.Email, key)}, nil
}

// ConfirmTOTP turns the pending secret on with a first code of it and returns
// the recovery codes (shown once; stored hashed).
func (s *Service) ConfirmTOTP(ctx context.Context, userID int64, code string) ([]string, error) {
	var codes []string
	err := s.inTx(ctx, func(q *store.Queries) error {
		u, err := q.UserGet(ctx, userID)
		if err != nil {
			return err
		}
		if u.TotpConfirmedAt != nil || u.TotpSealed == nil || u.TotpKeyID == nil {
			return apperr.New(apperr.Conflict, "no second factor is waiting for confirmation; start one first")
		}
		key, err := s.ring.Open(*u.TotpKeyID, u.TotpSealed, totpAAD(userID))
		if err != nil {
			return err
		}
		step, ok := totpMatch(key, strings.TrimSpace(code), s.opts.Now())
		if !ok {
			return apperr.Invalidf("/code", "the code is wrong; type the code the app shows now")
		}
		now := s.opts.Now()
		if _, err := q.UserTOTPConfirm(ctx, store.UserTOTPConfirmParams{ID: userID, Step: &step, Now: &now}); err != nil {
			return err
		}
		var hashes [][]byte
		codes, hashes = newRecoveryCodes()
		return q.RecoveryCodesReplace(ctx, store.RecoveryCodesReplaceParams{UserID: userID, Hashes: hashes})
	})
	return codes, err
}

// RemoveTOTP turns the second factor off, with a current code or a recovery code.
func (s *Service) RemoveTOTP(ctx context.Context, userID int64, code string) error {
	if err := s.checkSecondFactor(ctx, userID, code); err != nil {
		return err
	}
	q := store.New(s.pool)
	if err := q.UserTOTPRemove(ctx, userID); err != nil {
		return err
	}
	return q.RecoveryCodesReplace(ctx, store.RecoveryCodesReplaceParams{UserID: userID, Hashes: [][]byte{}})
}

// SecondFactor answers a sign-in challenge with a TOTP code or a recovery code.
// A wrong code leaves the challenge usable until it expires (the failure limits
// bound the guesses); a right one spends it and signs in.
func (s *Service) SecondFactor(ctx context.Context, challenge, code, replacing string) (SignIn, error) {
	if !wellFormed(challenge, challengePrefix) {
		return SignIn{}, errToken
	}
	now := s.opts.Now()
	q := store.New(s.pool)
	p := store.UserTokenPeekParams{Now: &now, TokenHash: hashOf(challenge), Purpose: "second_factor"}
	row, err := q.UserTokenPeek(ctx, p)
	if notFound(err) {
		return SignIn{}, errToken
	}
	if err != nil {
		return SignIn{}, err
	}
	if err := s.checkSecondFactor(ctx, row.UserID, code); err != nil {
		return SignIn{}, err
	}
	if _, err := q.UserTokenUse(ctx, store.UserTokenUseParams{Now: p.Now, TokenHash: p.TokenHash, Purpose: p.Purpose}); notFound(err) {
		return SignIn{}, errToken // a concurrent answer spent it first
	} else if err != nil {
		return SignIn{}, err
	}
	if row.AccountID == nil {
		return SignIn{}, errToken
	}
	sess, err := s.sessions.SignInUser(ctx, row.UserID, *row.AccountID, replacing)
	return SignIn{Session: sess}, err
}

// checkSecondFactor accepts a TOTP code of a step not used before, or an unused
// recovery code (which is spent).
func (s *Service) checkSecondFactor(ctx context.Context, userID int64, code string) error {
	code = strings.TrimSpace(code)
	q := store.New(s.pool)
	if len(code) != totpDigits {
		n, err := q.RecoveryCodeUse(ctx, store.RecoveryCodeUseParams{UserID: userID, CodeHash: hashOf(normaliseRecovery(code))})
		if err != nil {
			return err
		}
		if n == 0 {
			return errCode
		}
		return nil
	}
	u, err := q.UserGet(ctx, userID)
	if err != nil {
		return err
	}
	if u.TotpConfirmedAt == nil || u.TotpKeyID == nil {
		return errCode
	}
	key, err := s.ring.Open(*u.TotpKeyID, u.TotpSealed, totpAAD(userID))
	if err != nil {
		return err
	}
	step, ok := totpMatch(key, code, s.opts.Now())
	if !ok {
		return errCode
	}
	n, err := q.UserTOTPUseStep(ctx, store.UserTOTPUseStepParams{ID: userID, Step: &step})
	if err != nil {
		return err
	}
	if n == 0 {
		return errCode // this step's code was used already: a replay
	}
	return nil
}

// newRecoveryCodes returns RecoveryCodes codes (xxxxx-xxxxx, 50 random bits
// each) and their hashes. SHA-256 suffices for a random code: there is no
// dictionary to try.
func newRecoveryCodes() ([]string, [][]byte) {
	codes := make([]string, RecoveryCodes)
	hashes := make([][]byte, RecoveryCodes)
	for i := range codes {
		var raw [7]byte
		_, _ = rand.Read(raw[:])
		s := strings.ToLower(b32.EncodeToString(raw[:]))[:10]
		codes[i] = s[:5] + "-" + s[5:]
		hashes[i] = hashOf(normaliseRecovery(codes[i]))
	}
	return codes, hashes
}

// normaliseRecovery forgives case and the dash.
func normaliseRecovery(code string) string {
	return "recovery:" + strings.ToLower(strings.ReplaceAll(strings.TrimSpace(code), "-", ""))
}
