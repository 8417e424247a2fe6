package chaos

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The service processes a run starts and kills are the product binary Run is
// given (-sendonce). The running executable is sendonce-harness, which has no
// `serve`: a run that re-executed itself would start processes that exit at once,
// and would wait for deliveries that never come instead of failing. So no file of
// the package may reach for os.Executable.
func TestRunsStartTheGivenBinaryNotThemselves(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(src), "os.Executable(") {
			t.Errorf("%s calls os.Executable: start the service with the bin Run was given (startServe, startProcess)", f)
		}
	}
}
