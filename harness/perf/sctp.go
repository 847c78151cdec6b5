package perf

import "errors"

// SCTPTests lists the SCTP tests.
var SCTPTests = []string{SCTPStream, SCTPRR}

// IsSCTP reports whether test is an SCTP test.
func IsSCTP(test string) bool { return test == SCTPStream || test == SCTPRR }

// errNoSCTP is what this build says to an SCTP test in real time.
var errNoSCTP = errors.New("SCTP tests do not run in real time in this build")
