package netstat

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// /proc/net/snmp as Linux 6.18 writes it (Ip and Icmp lines cut).
const sample = `Ip: Forwarding DefaultTTL InReceives
Ip: 1 64 9385219
Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors
Tcp: 1 200 120000 -1 46853 46771 62 64 0 7484549 7484579 166 3 120 0
Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
Udp: 1199922 7 933701 2133623 933700 5 1 0 0
UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
UdpLite: 9 9 9 9 9 9 9 9 9
`

func TestParse(t *testing.T) {
	c, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	want := Counters{UDPInDatagrams: 1199922, UDPNoPorts: 7, UDPInErrors: 933701, UDPRcvbufErrors: 933700, UDPInCsumErrors: 1,
		UDPOutDatagrams: 2133623, UDPSndbufErrors: 5, TCPOutSegs: 7484579, TCPRetransSegs: 166, TCPInErrs: 3}
	if c != want {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
	if c.UDPDropped() != 933708 {
		t.Errorf("UDPDropped = %d", c.UDPDropped())
	}
	d := c.Sub(Counters{UDPInDatagrams: 22, TCPRetransSegs: 6})
	if d.UDPInDatagrams != 1199900 || d.TCPRetransSegs != 160 || d.UDPNoPorts != 7 || d.Add(Counters{UDPInDatagrams: 22, TCPRetransSegs: 6}) != c {
		t.Errorf("Sub/Add: %+v", d)
	}
	if _, err := Parse(strings.NewReader("Ip: a\nIp: 1\n")); err == nil {
		t.Errorf("no Udp/Tcp lines: no error")
	}
	if _, err := Parse(strings.NewReader("Udp: InDatagrams\nUdp: x\n")); err == nil {
		t.Errorf("a bad value: no error")
	}
}

// /proc/net/dev as Linux 6.18 writes it.
const devSample = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:    6720      80    0    9    0     0          0         0     6720      80    0    0    0     0       0          0
  eth0: 735215048  487741    0   88    0     0          0         0      936      12    0    0    0     0       0          0
  eth1:       0       0    0    3    0     0          0         0        0       0    0    7    0     0       0          0
`

func TestParseDev(t *testing.T) {
	n, err := ParseDev(strings.NewReader(devSample))
	if err != nil || n != 91 { // eth0 88 + eth1 3; lo's 9 and transmit drops are not receive drops of the lab
		t.Errorf("ParseDev = %d, %v; want 91", n, err)
	}
	if _, err := ParseDev(strings.NewReader("Inter-|\n face |\n  eth0: 1 2 3\n")); err == nil || !strings.Contains(err.Error(), "3 columns for eth0") {
		t.Errorf("a short line: %v", err)
	}
	if _, err := ParseDev(strings.NewReader("")); err == nil {
		t.Error("no interfaces: no error")
	}
	c := Counters{IfaceRxDrops: 91}
	if d := c.Sub(Counters{IfaceRxDrops: 1}); d.IfaceRxDrops != 90 || d.Add(Counters{IfaceRxDrops: 1}) != c {
		t.Errorf("Sub/Add lose IfaceRxDrops: %+v", d)
	}
}

func FuzzParseDev(f *testing.F) {
	f.Add(devSample)
	f.Fuzz(func(t *testing.T, s string) {
		ParseDev(strings.NewReader(s)) // never panics
	})
}

func FuzzParse(f *testing.F) {
	f.Add(sample)
	f.Fuzz(func(t *testing.T, s string) {
		Parse(strings.NewReader(s)) // never panics
	})
}

// This machine's /proc/stat, cut after the per-CPU lines.
const statSample = `cpu  77166 552 38356 1103593 718 0 3037 6016 0 0
cpu0 38000 300 19000 551000 400 0 1500 3000 0 0
cpu1 39166 252 19356 552593 318 0 1537 3016 0 0
intr 123456 0 0
`

func TestParseSteal(t *testing.T) {
	if d, err := ParseSteal(strings.NewReader(statSample)); err != nil || d != 60160*time.Millisecond {
		t.Errorf("ParseSteal = %v, %v; want 1m0.16s (6016 ticks of 10 ms)", d, err)
	}
	for _, bad := range []string{"", "cpu 1 2 3 4 5 6 7\n", "cpu 1 2 3 4 5 6 7 x 0 0\n", "cpu 1 2 3 4 5 6 7 99999999999999999 0 0\n", "intr 1 2\n"} {
		if d, err := ParseSteal(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseSteal(%q) = %v, no error", bad, d)
		}
	}
	if got := StealShare(time.Duration(runtime.NumCPU())*time.Second, 2*time.Second); got != 0.5 {
		t.Errorf("StealShare of a second of each CPU in two = %v, want 0.5", got)
	}
	if got := StealShare(time.Second, 0); got != 0 {
		t.Errorf("StealShare over no time = %v, want 0", got)
	}
	if d, err := Steal(); err != nil || d < 0 {
		t.Errorf("Steal() = %v, %v on this machine", d, err)
	}
}

func FuzzParseSteal(f *testing.F) {
	f.Add(statSample)
	f.Fuzz(func(t *testing.T, s string) {
		if d, err := ParseSteal(strings.NewReader(s)); err == nil && d < 0 {
			t.Errorf("ParseSteal(%q) = %v", s, d)
		}
	})
}

// /proc/net/netstat after /proc/net/snmp: the receive-memory drops of
// TCP's three queues are summed (TcpExt's line, shortened).
func TestParseTCPRcvDrops(t *testing.T) {
	ext := `TcpExt: SyncookiesSent TCPBacklogDrop TCPRcvQDrop TCPOFODrop PruneCalled
TcpExt: 0 4 17 3 99
IpExt: InNoRoutes
IpExt: 0
`
	c, err := Parse(strings.NewReader(sample + ext))
	if err != nil {
		t.Fatal(err)
	}
	if c.TCPRcvDrops != 24 || c.UDPRcvbufErrors != 933700 {
		t.Errorf("TCPRcvDrops %d, UDPRcvbufErrors %d; want 24 (4 + 17 + 3) and 933700", c.TCPRcvDrops, c.UDPRcvbufErrors)
	}
	if d := c.Sub(Counters{TCPRcvDrops: 20}); d.TCPRcvDrops != 4 {
		t.Errorf("Sub: %d, want 4", d.TCPRcvDrops)
	}
}

// The busy time is the cpu line's user, nice and system ticks.
func TestParseBusy(t *testing.T) {
	if d, err := ParseBusy(strings.NewReader(statSample)); err != nil || d != (77166+552+38356)*10*time.Millisecond {
		t.Errorf("ParseBusy = %v, %v; want 1160.74 s", d, err)
	}
	for _, bad := range []string{"", "cpu 1 2\n", "cpu 1 x 3\n", "cpu 99999999999999999 2 3\n", "intr 1 2\n"} {
		if d, err := ParseBusy(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseBusy(%q) = %v, no error", bad, d)
		}
	}
	if d, err := Busy(); err != nil || d <= 0 {
		t.Errorf("Busy() = %v, %v on this machine", d, err)
	}
}

func FuzzParseBusy(f *testing.F) {
	f.Add(statSample)
	f.Fuzz(func(t *testing.T, s string) {
		if d, err := ParseBusy(strings.NewReader(s)); err == nil && d < 0 {
			t.Errorf("ParseBusy(%q) = %v", s, d)
		}
	})
}
