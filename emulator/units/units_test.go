package units

import (
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want BitRate
	}{
		{"10M", 10 * Mbps}, {"100M", 100 * Mbps}, {"1G", Gbps}, {"155.52M", 155_520_000},
		{"oc3", 155_520_000}, {"OC12", 622_080_000}, {"ds3", 44_736_000}, {"atm25", 25_600_000},
		{"100Mbps", 100 * Mbps}, {"64kbit", 64 * Kbps}, {"1500", 1500}, {"1k", MinRate}, {"1000G", MaxRate},
	} {
		got, err := ParseRate(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseRate(%q) = %v, %v, want %v", tc.in, got, err, tc.want)
		}
	}
	// tc takes whole octets a second and a 32-bit burst: 1 bit/s and 9e18
	// failed only in `up`; NaN and inf wrapped to nonsense.
	for _, bad := range []string{"", "fast", "-10M", "0", "10X", "1", "999", "9e18", "1001G", "NaN", "inf", "1e30"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) succeeded, want an error", bad)
		}
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Size
	}{{"128KiB", 128 << 10}, {"1MiB", 1 << 20}, {"1500", 1500}, {"1500B", 1500}, {"64KB", 64000}} {
		got, err := ParseSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %v, %v, want %v", tc.in, got, err, tc.want)
		}
	}
	// 17179869185GiB wrapped to 1 GiB.
	for _, bad := range []string{"", "1.5KiB", "-1", "lots", "17179869185GiB", "9223372036854775808"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) succeeded, want an error", bad)
		}
	}
}

func TestTxTime(t *testing.T) {
	for _, tc := range []struct {
		r    BitRate
		bits int64
		want time.Duration
	}{
		{100 * Mbps, 1538 * 8, 123040 * time.Nanosecond}, // a full frame on the wire at 100M
		{10 * Mbps, 84 * 8, 67200 * time.Nanosecond},     // a minimum frame at 10M
		{Gbps, 1538 * 8, 12304 * time.Nanosecond},
		{155_520_000, 53 * 8, 2726 * time.Nanosecond}, // 2726.3 ns, rounded down
		{100 * Mbps, 1e12, 10000 * time.Second},       // no overflow for large sums
	} {
		if got := tc.r.TxTime(tc.bits); got != tc.want {
			t.Errorf("%v.TxTime(%d) = %v, want %v", tc.r, tc.bits, got, tc.want)
		}
	}
}

func TestString(t *testing.T) {
	if s := BitRate(155_520_000).String(); s != "155.52M" {
		t.Errorf("String() = %q", s)
	}
	if s := Size(128 << 10).String(); s != "128KiB" {
		t.Errorf("String() = %q", s)
	}
}
