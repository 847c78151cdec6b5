package perf

import (
	"fmt"
	"strconv"
	"strings"
)

// Tests of the native AAL API (cells/native): SDUs on a VC with no IP and
// no LLC/SNAP, named as netperf named its tests, by the protocol they
// measure (its FORE API tests were FORE_STREAM and FORE_RR). A stream sends
// SDUs of -m octets one way for the duration; request/response sends a
// request SDU and waits for the response SDU on the VC back.
const (
	AAL5Stream  = "AAL5_STREAM"
	AAL5RR      = "AAL5_RR"
	AAL34Stream = "AAL34_STREAM"
	AAL34RR     = "AAL34_RR"
)

// AALTests lists the native AAL tests.
var AALTests = []string{AAL5Stream, AAL5RR, AAL34Stream, AAL34RR}

// IsAAL reports whether test is a native AAL test.
func IsAAL(test string) bool {
	for _, t := range AALTests {
		if t == test {
			return true
		}
	}
	return false
}

// AALOf returns the adaptation layer a native AAL test asks for, "aal5" or
// "aal34" (as the lab file writes it), or "" for any other test.
func AALOf(test string) string {
	switch test {
	case AAL5Stream, AAL5RR:
		return "aal5"
	case AAL34Stream, AAL34RR:
		return "aal34"
	}
	return ""
}

// NativeVC is the VC a native AAL test uses at one end: the interface it
// opens a packet socket on and the VPI/VCI it sends and receives on.
type NativeVC struct {
	Iface    string `json:"iface"`
	VPI, VCI uint16
}

func (v NativeVC) String() string { return fmt.Sprintf("%s:%d/%d", v.Iface, v.VPI, v.VCI) }

// ParseNativeVC reads "IFACE:VPI/VCI" (eth0:0/101), or "VPI/VCI" on eth0.
func ParseNativeVC(s string) (NativeVC, error) {
	v := NativeVC{Iface: "eth0"}
	rest := s
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		v.Iface, rest = s[:i], s[i+1:]
	}
	vpi, vci, ok := strings.Cut(rest, "/")
	p, err1 := strconv.ParseUint(vpi, 10, 16)
	c, err2 := strconv.ParseUint(vci, 10, 16)
	if !ok || err1 != nil || err2 != nil || p > 4095 || v.Iface == "" {
		return NativeVC{}, fmt.Errorf("bad VC %q: give IFACE:VPI/VCI, such as eth0:0/101 (VPI 0-4095, VCI 0-65535)", s)
	}
	v.VPI, v.VCI = uint16(p), uint16(c)
	return v, nil
}

// MaxAALSDU is the largest SDU of a native AAL test on an interface of
// the given MTU: the native frame's header takes 8 octets of it.
func MaxAALSDU(mtu int) int { return mtu - 8 }

// SetVCs sets the spec's VCs from the perf client's --vc and --peer-vc
// (either may be empty); an error names the flag.
func (s *Spec) SetVCs(vc, peerVC string) error {
	for _, v := range []struct {
		flag, s string
		into    **NativeVC
	}{{"--vc", vc, &s.VC}, {"--peer-vc", peerVC, &s.PeerVC}} {
		if v.s == "" {
			continue
		}
		nv, err := ParseNativeVC(v.s)
		if err != nil {
			return fmt.Errorf("%s: %w", v.flag, err)
		}
		*v.into = &nv
	}
	return nil
}
