package settings

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator/units"
)

// Each row's range, as messages write it.
func TestSettingsRange(t *testing.T) {
	for key, want := range map[string]string{
		"rate":   "1k to 1000G",
		"delay":  "0 to 24h",
		"jitter": "0 to 24h",
		"loss":   "0% to 100%",
		"limit":  "1 to 1048576 (0: the medium's default, 1000 frames or 192000 cells)",
		"buffer": "1518B to 1GiB",
	} {
		if got := Settings[key].Range(); got != want {
			t.Errorf("Settings[%s].Range() = %q, want %q", key, got, want)
		}
	}
	if len(Settings) != len(SettingKeys) {
		t.Fatalf("%d settings, %d keys listed", len(Settings), len(SettingKeys))
	}
	for _, k := range SettingKeys {
		if _, ok := Settings[k]; !ok {
			t.Errorf("key %s listed but not a setting", k)
		}
	}
}

// atmlab set's words outside the lab file's ranges are refused with the key
// and its range: before, set took a delay of 114 years, a limit that
// reopened the unbounded delay line, a 1000 GiB buffer and a NaN loss.
func TestSetRefusesValuesOutsideTheRanges(t *testing.T) {
	for word, want := range map[string]string{
		"delay=1000000h":   `bad delay "1000000h": a duration in Go syntax from 0 to 24h, such as 20ms`,
		"jitter=2000000h":  `bad jitter "2000000h": a duration in Go syntax from 0 to 24h`,
		"delay=-1s":        `bad delay "-1s": a duration in Go syntax from 0 to 24h`,
		"limit=2000000000": `bad limit "2000000000": a whole number from 1 to 1048576 (0: the medium's default`,
		"limit=-7":         `bad limit "-7": a whole number from 1 to 1048576`,
		"buffer=1000GiB":   `bad buffer "1000GiB": a size with B, KiB, MiB or GiB from 1518B to 1GiB, such as 128KiB`,
		"buffer=1KiB":      `bad buffer "1KiB": a size with B, KiB, MiB or GiB from 1518B to 1GiB`,
		"loss=NaN":         `bad loss "NaN": a percentage from 0% to 100%, such as 0.1%`,
		"loss=NaN%":        `bad loss "NaN%": a percentage from 0% to 100%`,
		"loss=+Inf":        `bad loss "+Inf": a percentage from 0% to 100%`,
		"loss=500%":        `bad loss "500%": a percentage from 0% to 100%`,
		"rate=0":           `bad rate "0": a bit rate (k, M, G or a PHY name) from 1k to 1000G, such as 10M`,
		"rate=-5":          `bad rate "-5": a bit rate (k, M, G or a PHY name) from 1k to 1000G`,
		"rate=NaN":         `bad rate "NaN": a bit rate (k, M, G or a PHY name) from 1k to 1000G`,
		"rate=2000G":       `bad rate "2000G": a bit rate (k, M, G or a PHY name) from 1k to 1000G`,
	} {
		c, err := ParseChange([]string{"delay=1ms", word})
		if err == nil || err.Error() != want && !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ParseChange(%s) = %v, want %q", word, err, want)
		}
		if c != (Change{}) {
			t.Errorf("ParseChange(%s) returned a change with its error: %v", word, c)
		}
	}
	// The ends of each range are the lab file's, and taken.
	c, err := ParseChange([]string{"rate=1k", "delay=24h", "jitter=0", "loss=100%", "limit=1048576", "buffer=1GiB"})
	if err != nil || c.String() != "rate=1k delay=24h0m0s jitter=0s loss=100% limit=1048576 buffer=1024MiB" {
		t.Fatalf("the ends of the ranges: %v %v", c, err)
	}
	if c, err := ParseChange([]string{"limit=0", "rate=1000G", "buffer=1518B"}); err != nil || *c.Limit != 0 {
		t.Fatalf("limit=0 (the medium's default): %v %v", c, err)
	}
}

// A change that comes as values, not words (the control socket's JSON),
// is checked against the same rows: each bad value is named with its range.
func TestChangeCheck(t *testing.T) {
	rate := func(r units.BitRate) *units.BitRate { return &r }
	dur := func(d time.Duration) *time.Duration { return &d }
	f := func(v float64) *float64 { return &v }
	n := func(v int) *int { return &v }
	size := func(s units.Size) *units.Size { return &s }
	for _, tc := range []struct {
		c    Change
		want string
	}{
		{Change{Rate: rate(0)}, "bad change: rate 0 is out of range: a bit rate (k, M, G or a PHY name) from 1k to 1000G, such as 10M"},
		{Change{Rate: rate(-5)}, "rate -5 is out of range"},
		{Change{Rate: rate(units.MaxRate + 1)}, "rate 1000.000000001G is out of range"},
		{Change{Delay: dur(-time.Second)}, "delay -1s is out of range: a duration in Go syntax from 0 to 24h"},
		{Change{Jitter: dur(MaxDuration + 1)}, "jitter 24h0m0.000000001s is out of range"},
		{Change{Loss: f(5)}, "loss 500% is out of range: a percentage from 0% to 100%"},
		{Change{Loss: f(math.NaN())}, "loss NaN% is out of range"},
		{Change{Loss: f(math.Inf(-1))}, "loss -Inf% is out of range"},
		{Change{Buffer: size(-1)}, "buffer -1B is out of range: a size with B, KiB, MiB or GiB from 1518B to 1GiB"},
		{Change{Limit: n(-7)}, "limit -7 is out of range: a whole number from 1 to 1048576"},
		{Change{Limit: n(2_000_000_000)}, "limit 2000000000 is out of range"},
		{Change{Rate: rate(0), Loss: f(2)}, "rate 0 is out of range: a bit rate (k, M, G or a PHY name) from 1k to 1000G, such as 10M; loss 200% is out of range"},
	} {
		if err := tc.c.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%+v) = %v, want %q", tc.c, err, tc.want)
		}
	}
	ok := Change{Rate: rate(units.MinRate), Delay: dur(MaxDuration), Jitter: dur(0), Loss: f(1), Limit: n(0), Buffer: size(MaxBuffer), Reset: true}
	if err := ok.Check(); err != nil {
		t.Fatalf("the ends of the ranges: %v", err)
	}
	if err := (Change{Limit: n(MaxLimit)}).Check(); err != nil {
		t.Fatal(err)
	}
}
