package erasure_test

import (
	"testing"

	"github.com/sendonce/sendonce/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }
