package sshview

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: a
// closed server ends every connection, logged in or not, and all a
// session started.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
