package cli

import (
	"fmt"
	"os"

	"github.com/locklab/locklab/themes"
	"github.com/mattn/go-isatty"
)

// interactive reports whether stdin and stdout are a terminal.
func interactive() bool {
	return isatty.IsTerminal(os.Stdin.Fd()) && isatty.IsTerminal(os.Stdout.Fd())
}

// pickTheme honours --theme, then NO_COLOR.
func pickTheme(name string) (*themes.Theme, error) {
	if name == "" && os.Getenv("NO_COLOR") != "" {
		return themes.Mono(), nil
	}
	th, err := themes.ByName(name)
	if err != nil {
		return nil, usageError{fmt.Errorf("--theme: %w", err)}
	}
	return th, nil
}
