package sdktest_test

import (
	"os"
	"testing"

	"github.com/sendonce/sendonce/internal/servicetest"
)

// The examples run against a real service (`sendonce dev` on a throwaway database),
// found the way a program finds it: SENDONCE_URL and SENDONCE_API_KEY.
func TestMain(m *testing.M) {
	servicetest.Main(m, true, func(s servicetest.Service) {
		os.Setenv("SENDONCE_URL", s.URL)
		os.Setenv("SENDONCE_API_KEY", s.APIKey)
	})
}
