package cut

import (
	"bytes"
	"encoding/hex"
	"testing"
	"time"
)

// A stamped frame's datagram, octet by octet: magic "ac", version 1, kind
// 1, link 5, direction B to A, sequence 258, departure 1.5 ms, the frame.
func TestFrameDatagramKnownAnswer(t *testing.T) {
	f := Frame{Link: 5, BToA: true, Seq: 258, Departure: 1500 * time.Microsecond, Data: []byte{0xde, 0xad}}
	got := AppendFrame(nil, f)
	want, _ := hex.DecodeString("6163" + "01" + "01" + "0005" + "01" + "00" + "00000102" + "000000000016e360" + "dead")
	if !bytes.Equal(got, want) {
		t.Fatalf("datagram\n got %x\nwant %x", got, want)
	}
	back, _, isFrame, err := Decode(got)
	if err != nil || !isFrame || back.Link != 5 || !back.BToA || back.Seq != 258 || back.Departure != f.Departure || !bytes.Equal(back.Data, f.Data) {
		t.Fatalf("decoded %+v, %v, %v", back, isFrame, err)
	}
}

func TestClockDatagramsKnownAnswer(t *testing.T) {
	p := Ping{Tag: 0x01020304, Seq: 7, To: 0xa0b0c0d0, T1: 10}
	got := AppendPing(nil, p)
	want, _ := hex.DecodeString("6163" + "01" + "02" + "01020304" + "00000007" + "a0b0c0d0" + "000000000000000a")
	if !bytes.Equal(got, want) {
		t.Fatalf("ping\n got %x\nwant %x", got, want)
	}
	p.Pong, p.T2, p.T3 = true, 20, 30
	got = AppendPing(nil, p)
	want, _ = hex.DecodeString("6163" + "01" + "03" + "01020304" + "00000007" + "a0b0c0d0" + "000000000000000a" + "0000000000000014" + "000000000000001e")
	if !bytes.Equal(got, want) {
		t.Fatalf("pong\n got %x\nwant %x", got, want)
	}
	_, back, isFrame, err := Decode(got)
	if err != nil || isFrame || back != p {
		t.Fatalf("decoded %+v, %v, %v", back, isFrame, err)
	}
}

func TestDecodeRefusesMalformedDatagrams(t *testing.T) {
	frame := AppendFrame(nil, Frame{Data: []byte{1}})
	ping := AppendPing(nil, Ping{})
	bad := map[string][]byte{
		"empty":            nil,
		"wrong magic":      append([]byte("xx"), frame[2:]...),
		"wrong version":    append([]byte{'a', 'c', 2}, frame[3:]...),
		"unknown kind":     {'a', 'c', 1, 9},
		"short frame head": frame[:frameHead-1],
		"bad direction":    append(append([]byte{}, frame[:6]...), append([]byte{2}, frame[7:]...)...),
		"long ping":        append(ping, 0),
		"short pong":       append([]byte{'a', 'c', 1, kindPong}, ping[4:]...),
		"oversized frame":  AppendFrame(nil, Frame{Data: make([]byte, MaxFrame+1)}),
	}
	for name, b := range bad {
		if _, _, _, err := Decode(b); err == nil {
			t.Errorf("%s: decoded without an error", name)
		}
	}
}

// FuzzDecode: no input panics the decoder, and what decodes encodes back
// to the same octets.
func FuzzDecode(f *testing.F) {
	f.Add(AppendFrame(nil, Frame{Link: 1, Seq: 2, Departure: 3, Data: []byte("frame")}))
	f.Add(AppendPing(nil, Ping{Tag: 1, Seq: 2, T1: 3}))
	f.Add(AppendPing(nil, Ping{Tag: 1, Seq: 2, T1: 3, T2: 4, T3: 5, Pong: true}))
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, p, isFrame, err := Decode(b)
		if err != nil {
			return
		}
		var again []byte
		if isFrame {
			again = AppendFrame(nil, fr)
		} else {
			again = AppendPing(nil, p)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("%x decoded and encoded again is %x", b, again)
		}
	})
}
