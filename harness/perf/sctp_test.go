package perf

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestSCTPTestsAreNetperfsNames: SCTP_STREAM and SCTP_RR are tests the
// tool takes, with stream and request/response defaults.
func TestSCTPTestsAreNetperfsNames(t *testing.T) {
	for _, test := range []string{"sctp_stream", "SCTP_RR"} {
		s := Spec{Test: test}
		if err := s.Validate(); err != nil {
			t.Fatalf("%s: %v", test, err)
		}
		if !IsSCTP(s.Test) || s.Message != 16384 || s.Request != 1 {
			t.Errorf("%s: %+v", test, s)
		}
	}
}

// TestResultNamesTheSCTPImplementation: the result's JSON carries the SCTP
// stack as "implementation", and the words say it.
func TestResultNamesTheSCTPImplementation(t *testing.T) {
	r := Result{Test: SCTPStream, Implementation: "kernel", Spec: Spec{Test: SCTPStream, Message: 16384}}
	b, _ := json.Marshal(r)
	var m map[string]any
	json.Unmarshal(b, &m)
	if m["implementation"] != "kernel" {
		t.Errorf("JSON %s: no implementation", b)
	}
	var w bytes.Buffer
	WriteResult(&w, "", r)
	if !strings.Contains(w.String(), "SCTP stack: kernel") {
		t.Errorf("words:\n%s", w.String())
	}
}
