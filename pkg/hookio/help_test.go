package hookio

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/clienv"
)

// blockingStdin stands for a terminal nobody types into: reading it is
// the defect (the hook would wait forever).
type blockingStdin struct{ t *testing.T }

func (b blockingStdin) Read([]byte) (int, error) {
	b.t.Fatal("stdin was read")
	return 0, nil
}

// TestHelpAndVersionDoNotReadStdin: a person trying a hook binary by hand
// gets its usage or version at once, exit 0, and the body never runs.
func TestHelpAndVersionDoNotReadStdin(t *testing.T) {
	opts := Options{Name: "intermem-test", Usage: "Usage: intermem-test < payload.json\n"}
	body := func(context.Context, *Hook) ([]byte, error) {
		t.Fatal("the body ran")
		return nil, nil
	}
	for arg, want := range map[string]string{
		"--help": "Usage: intermem-test < payload.json\n", "-h": "Usage: intermem-test < payload.json\n",
		"help": "Usage: intermem-test < payload.json\n", "--version": "intermem-test " + clienv.Version + "\n",
		"-version": "intermem-test " + clienv.Version + "\n",
	} {
		var out, errb bytes.Buffer
		env := cli.New(nil, t.TempDir(), blockingStdin{t}, &out, &errb)
		if code := Run(env, []string{arg}, opts, body); code != 0 {
			t.Errorf("%s: exit %d", arg, code)
		}
		if out.String() != want || errb.Len() != 0 {
			t.Errorf("%s: stdout %q stderr %q, want %q", arg, out.String(), errb.String(), want)
		}
	}
	// Anything else is a hook run: stdin is read.
	var out bytes.Buffer
	env := cli.New(nil, t.TempDir(), strings.NewReader(""), &out, &out)
	Run(env, []string{"--unknown"}, opts, body)
	if out.Len() != 0 {
		t.Errorf("a hook run printed %q", out.String())
	}
}
