package native

import (
	"bytes"
	"errors"
	"testing"
)

// Known answers: the frames a host sends for VC 0/100, written out by hand
// from the layout in the package comment.
func TestParseKnownAnswers(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		want    Header
		wantSDU []byte
		err     error
	}{
		{"three octets on 0/100", []byte{1, 0, 0, 0, 0, 100, 0, 3, 'a', 'b', 'c'}, Header{VPI: 0, VCI: 100, Len: 3}, []byte("abc"), nil},
		{"padding ignored", append([]byte{1, 0, 0, 1, 0x01, 0x00, 0, 2, 0xde, 0xad}, make([]byte, 40)...), Header{VPI: 1, VCI: 256, Len: 2}, []byte{0xde, 0xad}, nil},
		{"empty SDU", []byte{1, 0, 0x0f, 0xff, 0xff, 0xff, 0, 0}, Header{VPI: 4095, VCI: 65535}, []byte{}, nil},
		{"short", []byte{1, 0, 0, 0, 0, 100, 0}, Header{}, nil, ErrShort},
		{"version 2", []byte{2, 0, 0, 0, 0, 100, 0, 0}, Header{}, nil, ErrVersion},
		{"reserved set", []byte{1, 1, 0, 0, 0, 100, 0, 0}, Header{}, nil, ErrVersion},
		{"VPI 4096", []byte{1, 0, 0x10, 0, 0, 100, 0, 0}, Header{}, nil, ErrVPI},
		{"length past the end", []byte{1, 0, 0, 0, 0, 100, 0, 4, 'a', 'b', 'c'}, Header{}, nil, ErrLength},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, sdu, err := Parse(tt.in)
			if !errors.Is(err, tt.err) || h != tt.want || !bytes.Equal(sdu, tt.wantSDU) {
				t.Errorf("Parse(% x) = %+v, % x, %v, want %+v, % x, %v", tt.in, h, sdu, err, tt.want, tt.wantSDU, tt.err)
			}
		})
	}
}

func TestAppendKnownAnswer(t *testing.T) {
	got, err := Append([]byte{0xff}, 0, 100, []byte("abc"))
	want := []byte{0xff, 1, 0, 0, 0, 0, 100, 0, 3, 'a', 'b', 'c'}
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("Append(0/100, abc) = % x, %v, want % x", got, err, want)
	}
	if _, err := Append(nil, 4096, 100, nil); err == nil {
		t.Error("Append(VPI 4096) succeeded")
	}
	if _, err := Append(nil, 0, 100, make([]byte, MaxSDU+1)); err == nil {
		t.Error("Append(65536 octets) succeeded")
	}
}

// FuzzParse: Parse never panics, its SDU lies inside its input, and a frame
// it reads is written back the same by Append (less any padding).
func FuzzParse(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 0, 100, 0, 3, 'a', 'b', 'c'})
	f.Add([]byte{1, 0, 0x0f, 0xff, 0xff, 0xff, 0, 0, 0, 0})
	f.Add([]byte{1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, sdu, err := Parse(b)
		if err != nil {
			return
		}
		if len(sdu) != h.Len || HeaderLen+h.Len > len(b) {
			t.Fatalf("Parse(% x): SDU of %d octets, header says %d", b, len(sdu), h.Len)
		}
		again, err := Append(nil, h.VPI, h.VCI, sdu)
		if err != nil || !bytes.Equal(again, b[:HeaderLen+h.Len]) {
			t.Fatalf("Append(Parse(% x)) = % x, %v", b, again, err)
		}
	})
}
