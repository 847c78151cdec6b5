package main

import (
	"errors"
	"strings"
	"testing"
)

// The native AAL tests need both ends of their VC: without --vc and
// --peer-vc, or with one that does not parse, perf client is a usage
// error that names the flag and its form.
func TestPerfClientAALNeedsItsVCs(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-t", "AAL5_STREAM"}, "--vc IFACE:VPI/VCI and --peer-vc"},
		{[]string{"-t", "AAL5_RR", "--vc", "eth0:0/101"}, "--peer-vc"},
		{[]string{"-t", "AAL34_STREAM", "--vc", "eth0:0-101", "--peer-vc", "0/101"}, "--vc: bad VC \"eth0:0-101\": give IFACE:VPI/VCI"},
		{[]string{"-t", "AAL5_STREAM", "--vc", "0/101", "--peer-vc", "eth0:4096/101"}, "--peer-vc: bad VC"},
	} {
		_, _, err := run(t, append([]string{"perf", "client", "-H", "127.0.0.1"}, tt.args...)...)
		var u usageError
		if err == nil || !errors.As(err, &u) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("perf client %v: %v, want a usage error containing %q", tt.args, err, tt.want)
		}
	}
}
