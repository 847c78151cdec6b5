package theory

import (
	"errors"
	"strings"
	"testing"
)

// calc's table of an ATM path: a message a byte over a cell's worth costs
// a cell more, and ATM's default MTU applies unless --mtu is given.
func TestCalcTableOfAnATMPath(t *testing.T) {
	c, err := NewCalc(CalcFlags{Rate: "100M", PHY: "oc3", AAL: "aal5", Encap: "llc", MTU: 1500, Proto: "udp"})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := c.Ceilings(&b, "table", []int{1444, 1445}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, "ATM oc3 (353207.5 cells/s), aal5, llc, MTU 9180, udp\n") {
		t.Fatalf("head:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.Contains(lines[2], " 31 ") || !strings.Contains(lines[3], " 32 ") {
		t.Fatalf("want 31 then 32 cells:\n%s", out)
	}
}

// A flag or size calc cannot take is the caller's mistake (InputError),
// named after its flag.
func TestCalcBadInputIsInputError(t *testing.T) {
	_, err := NewCalc(CalcFlags{Rate: "100M", PHY: "oc9", AAL: "aal5", Encap: "llc", MTU: 1500, Proto: "udp"})
	var in InputError
	if !errors.As(err, &in) || !strings.HasPrefix(err.Error(), "--phy: ") {
		t.Fatalf("--phy oc9: %v", err)
	}
	c, err := NewCalc(CalcFlags{Rate: "100M", MTU: 1500, Proto: "udp"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ceilings(&strings.Builder{}, "table", []int{70000}); !errors.As(err, &in) {
		t.Fatalf("a 70000-byte UDP payload: %v", err)
	}
	if err := c.SawtoothSteps(&strings.Builder{}, "table", []int{1, 2}); !errors.As(err, &in) {
		t.Fatalf("a sawtooth of Ethernet: %v", err)
	}
}

// calc --proto sctp says how an SCTP message is carried and bills its
// chunk headers: a 1452-octet message fills one 1500-octet packet.
func TestCalcSCTPSaysChunksAndFillsAPacket(t *testing.T) {
	c, err := NewCalc(CalcFlags{Rate: "100M", MTU: 1500, Proto: "sctp"})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := c.Ceilings(&b, "csv", []int{1452, 1453}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.String(), "DATA chunks of at most 1452 octets") {
		t.Errorf("Calc.String() = %q", c.String())
	}
	out := b.String()
	if !strings.Contains(out, "100000000,1500,sctp,1452,1,1538,") || !strings.Contains(out, "100000000,1500,sctp,1453,2,1628,") {
		t.Errorf("csv:\n%s", out)
	}
}
