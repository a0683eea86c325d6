package cli

import "testing"

func TestEtcdFlagsThatCannotWork(t *testing.T) {
	t.Setenv("LOCKLAB_ETCD_URL", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "oversell", "--lock", "etcd", "--etcd-members", "2"}, "--etcd-members must be 1, 3 or 5 (got 2)"},
		{[]string{"run", "oversell", "--lock", "etcd", "--etcd-members", "3", "--etcd", "http://127.0.0.1:1"}, "--etcd-members sizes the embedded etcd; --etcd (or LOCKLAB_ETCD_URL) names a cluster of yours"},
		{[]string{"run", "oversell", "--lock", "etcd", "--etcd", "ftp://bob:s3cret@127.0.0.1:1"}, "invalid etcd URL ftp://bob:xxxxx@127.0.0.1:1: want http://host:port"},
	} {
		code, _, stderr := cli(t, tc.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (%q)", tc.args, code, stderr)
		}
		oneLine(t, tc.args[len(tc.args)-1], stderr, tc.want)
	}
}
