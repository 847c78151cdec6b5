package main

import (
	"testing"
	"time"
)

// atmlab set refuses a value outside the lab file's range at once, naming
// the key and the range, before it looks for the lab: before, delay=1000000h,
// jitter=2000000h, limit=2000000000 and buffer=1000GiB were applied, and
// loss=NaN waited 5 s for "no request within 5s".
func TestSetRefusesOutOfRangeAtOnce(t *testing.T) {
	for word, want := range map[string]string{
		"delay=1000000h":   `bad delay "1000000h": a duration in Go syntax from 0 to 24h, such as 20ms`,
		"jitter=2000000h":  `bad jitter "2000000h": a duration in Go syntax from 0 to 24h, such as 1ms`,
		"limit=2000000000": `bad limit "2000000000": a whole number from 1 to 1048576 (0: the medium's default, 1000 frames or 192000 cells), such as 1000`,
		"buffer=1000GiB":   `bad buffer "1000GiB": a size with B, KiB, MiB or GiB from 1518B to 1GiB, such as 128KiB`,
		"loss=NaN":         `bad loss "NaN": a percentage from 0% to 100%, such as 0.1%`,
		"rate=0":           `bad rate "0": a bit rate (k, M, G or a PHY name) from 1k to 1000G, such as 10M`,
	} {
		start := time.Now()
		_, _, err := run(t, "set", "nolab", "h1:eth0", "delay=1ms", word)
		if err == nil || err.Error() != want {
			t.Errorf("set %s: %v, want %q", word, err, want)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("set %s: answered after %v", word, d)
		}
	}
}
