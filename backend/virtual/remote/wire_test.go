package remote

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
)

// knownWindow is a window of two entries, the first with a post, and its
// encoding worked out by hand: entries 0002; part 0000, step 03, flags
// 03 (pending, going), now 1.5 ms, limit 3 ms, one sent, one post (to
// part 0001 over cut 5, due at 2.5 ms, scheduled at 1.5 ms, 2 octets
// aabb); part 0001, step 06, no flags, now 1 ms, nothing else.
var knownWindow = Window{Entries: []Entry{
	{Part: 0, Op: OpLead, Pending: true, Going: true, Now: 1500000, Limit: 3000000, Sent: 1,
		Posts: []Post{{Dst: 1, Origin: 5, At: 2500000, From: 1500000, Data: []byte{0xaa, 0xbb}}}},
	{Part: 1, Op: OpFollow, Now: 1000000},
}}

const knownHex = "0002" +
	"0000" + "03" + "03" + "000000000016e360" + "00000000002dc6c0" + "00000001" + "00000001" +
	"0001" + "00000005" + "00000000002625a0" + "000000000016e360" + "00000002" + "aabb" +
	"0001" + "06" + "00" + "00000000000f4240" + "0000000000000000" + "00000000" + "00000000"

// A window encodes to the octets worked out by hand, and they decode to
// it again.
func TestWindowKnownAnswer(t *testing.T) {
	got := knownWindow.Append(nil)
	if hex.EncodeToString(got) != knownHex {
		t.Fatalf("encoded\n%x\nwant\n%s", got, knownHex)
	}
	w, err := Decode(got)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*w, knownWindow) {
		t.Errorf("decoded %+v, want %+v", *w, knownWindow)
	}
}

// A window cut short, with octets past its end, a count larger than what
// is left, an unknown step or flag is refused, saying which.
func TestWindowDecodeRefuses(t *testing.T) {
	good, _ := hex.DecodeString(knownHex)
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "cut short"},
		{"cut", good[:len(good)-1], "cut short"},
		{"trailing", append(append([]byte(nil), good...), 0), "past its end"},
		{"entries", []byte{0xff, 0xff, 0}, "entries"},
		{"step", func() []byte { b := bytes.Clone(good); b[4] = 9; return b }(), "no such step"},
		{"flags", func() []byte { b := bytes.Clone(good); b[5] = 0x80; return b }(), "unknown flags"},
		{"posts", func() []byte { b := bytes.Clone(good); b[26+2] = 0xff; return b }(), "posts"},
	} {
		if _, err := Decode(tc.b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

// Whatever Decode accepts encodes to the same octets.
func FuzzDecode(f *testing.F) {
	good, _ := hex.DecodeString(knownHex)
	f.Add(good)
	f.Add((&Window{}).Append(nil))
	f.Add([]byte{0, 1, 0, 0, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := Decode(b)
		if err != nil {
			return
		}
		if again := w.Append(nil); !bytes.Equal(again, b) {
			t.Fatalf("%x decoded and encoded again is %x", b, again)
		}
	})
}
