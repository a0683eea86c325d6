package cli

import (
	"os"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestComposeProfilesAndBinds: every service has a profile, so that
// `--profile redlock` starts only the five Redlock nodes, and every port is
// published on loopback unless $LOCKLAB_BIND says otherwise.
func TestComposeProfilesAndBinds(t *testing.T) {
	b, err := os.ReadFile("../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Services map[string]struct {
			Profiles []string `yaml:"profiles"`
			Ports    []string `yaml:"ports"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	var redlock []string
	for name, s := range c.Services {
		if len(s.Profiles) == 0 {
			t.Errorf("%s has no profile: every `docker compose --profile P up` would start it", name)
		}
		if slices.Contains(s.Profiles, "redlock") {
			redlock = append(redlock, name)
		}
		for _, p := range s.Ports {
			if !strings.HasPrefix(p, "${LOCKLAB_BIND:-127.0.0.1}:") {
				t.Errorf("%s publishes %q: bind it to ${LOCKLAB_BIND:-127.0.0.1}", name, p)
			}
		}
	}
	slices.Sort(redlock)
	if want := []string{"redlock-1", "redlock-2", "redlock-3", "redlock-4", "redlock-5"}; !slices.Equal(redlock, want) {
		t.Errorf("the redlock profile starts %v, want %v", redlock, want)
	}
	if !strings.Contains(string(b), "password") {
		t.Error("the file does not say why a Redis opened to a room needs a password")
	}
}
