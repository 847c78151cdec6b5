package labrun

import (
	"testing"
)

func TestIperf2CSV(t *testing.T) {
	// iperf 2.1.8, server side of a 10 s TCP test; a line it printed per interval first.
	text := "19700101000000,10.0.0.2,5001,10.0.0.1,42512,1,0.0-1.0,117964800,943718400\n" +
		"19700101000000,10.0.0.2,5001,10.0.0.1,42512,1,0.0-10.0,1178599424,942879539\n"
	b, bps, secs, ok := iperf2CSV(text)
	if !ok || b != 1178599424 || bps != 942879539 || secs != 10 {
		t.Fatalf("got %d %g %g %v", b, bps, secs, ok)
	}
	if _, _, _, ok := iperf2CSV("connect failed: Connection refused\n"); ok {
		t.Fatal("an error message parsed as a report")
	}
}

func FuzzIperf2CSV(f *testing.F) {
	f.Add("19700101000000,127.0.0.1,42512,127.0.0.1,5009,1,0.0-1.0,1673265212,13362043293")
	f.Add(",,,,,,-,,")
	f.Fuzz(func(t *testing.T, s string) {
		if b, bps, secs, ok := iperf2CSV(s); !ok && (b != 0 || bps != 0 || secs != 0) {
			t.Fatal("values without a report")
		}
	})
}
