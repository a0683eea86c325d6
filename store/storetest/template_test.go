package storetest

import (
	"os"
	"path/filepath"
	"testing"
)

// A data dir is initialised once per binary and arguments; later ones are
// copies, with the same files and modes.
func TestDataDirsAreInitialisedOnceThenCopied(t *testing.T) {
	templateBase = t.TempDir()
	t.Cleanup(func() { templateBase = "" })
	bin := filepath.Join(t.TempDir(), "initdb")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	inits := 0
	fill := func(data string) func() error {
		return func() error {
			inits++
			if err := os.MkdirAll(filepath.Join(data, "base"), 0o700); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(data, "base", "PG_VERSION"), []byte("16\n"), 0o600)
		}
	}
	for i, args := range [][]string{{"-E", "UTF8"}, {"-E", "UTF8"}, {"-E", "UTF8"}, {"-E", "LATIN1"}} {
		data := filepath.Join(t.TempDir(), "data")
		if err := initialised(data, bin, args, fill(data)); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(filepath.Join(data, "base", "PG_VERSION"))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("run %d: the data dir's file: %v, %v", i+1, fi, err)
		}
		if d, _ := os.Stat(data); d.Mode().Perm() != 0o700 {
			t.Errorf("run %d: data dir mode %v, want 0700", i+1, d.Mode().Perm())
		}
	}
	if inits != 2 {
		t.Errorf("initialised %d times for two sets of arguments; want 2", inits)
	}
	// A copy left half written is not used.
	if err := os.Remove(filepath.Join(templateRoot(), filepath.Base(bin)+"-"+keyOf(t, bin, []string{"-E", "UTF8"}), "complete")); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "data")
	if err := initialised(data, bin, []string{"-E", "UTF8"}, fill(data)); err != nil || inits != 3 {
		t.Errorf("a copy without its mark: inits %d, err %v; want a fresh init", inits, err)
	}
}

// The directory of copies is not used when others may write to it.
func TestDataDirCopiesOpenToOthersAreNotUsed(t *testing.T) {
	templateBase = t.TempDir()
	t.Cleanup(func() { templateBase = "" })
	root := templateRoot()
	if root == "" {
		t.Fatal("no directory of copies in a fresh temp dir")
	}
	if err := os.Chmod(root, 0o777); err != nil {
		t.Fatal(err)
	}
	if got := templateRoot(); got != "" {
		t.Errorf("a directory others may write to is used: %s", got)
	}
}

func keyOf(t *testing.T, bin string, args []string) string {
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	return templateKey(bin, fi, args)
}
