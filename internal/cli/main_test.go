package cli

import (
	"testing"

	"github.com/sendonce/sendonce/internal/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m, false, nil) }
