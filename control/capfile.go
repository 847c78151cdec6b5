package control

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/google/gopacket"
	"github.com/google/gopacket/pcapgo"
)

// packetWriter is a capture file being written: pcap or pcapng.
type packetWriter interface {
	WritePacket(ci gopacket.CaptureInfo, data []byte) error
}

// flushed writes each pcapng packet through at once: a capture is a
// stream a reader follows, and the file must be whole at any stop.
type flushed struct{ *pcapgo.NgWriter }

func (w flushed) WritePacket(ci gopacket.CaptureInfo, data []byte) error {
	if err := w.NgWriter.WritePacket(ci, data); err != nil {
		return err
	}
	return w.Flush()
}

// newPacketWriter starts a capture file on w: pcap, or when iface has a
// description (an AAL3/4 link, whose cells only atmlab's dissector
// decodes) pcapng, whose interface block carries it.
func newPacketWriter(w io.Writer, iface pcapgo.NgInterface) (packetWriter, error) {
	if iface.Description == "" {
		pw := pcapgo.NewWriter(w)
		return pw, pw.WriteFileHeader(65536, iface.LinkType)
	}
	iface.SnapLength = 65536
	nw, err := pcapgo.NewNgWriterInterface(w, iface, pcapgo.DefaultNgWriterOptions)
	if err != nil {
		return nil, err
	}
	return flushed{nw}, nw.Flush()
}

// copyCapture copies a capture stream from r to w, pcap or pcapng as it
// came, until count packets (if count > 0) or the stream's end. It returns
// the packets copied and the stream's interface description (pcapng).
func copyCapture(r *bufio.Reader, w io.Writer, count int, stopped func() bool) (int, string, error) {
	magic, err := r.Peek(4)
	if err != nil {
		return 0, "", fmt.Errorf("capture stream: %w", err)
	}
	var read func() ([]byte, gopacket.CaptureInfo, error)
	var out packetWriter
	var desc string
	if string(magic) == "\x0a\x0d\x0d\x0a" {
		in, err := pcapgo.NewNgReader(r, pcapgo.DefaultNgReaderOptions)
		if err != nil {
			return 0, "", fmt.Errorf("capture stream: %w", err)
		}
		iface, err := in.Interface(0)
		if err != nil {
			return 0, "", fmt.Errorf("capture stream: %w", err)
		}
		desc = iface.Description
		read = in.ReadPacketData
		if out, err = newPacketWriter(w, pcapgo.NgInterface{Name: iface.Name, Description: desc, LinkType: iface.LinkType}); err != nil {
			return 0, desc, err
		}
	} else {
		in, err := pcapgo.NewReader(r)
		if err != nil {
			return 0, "", fmt.Errorf("capture stream: %w", err)
		}
		read = in.ReadPacketData
		if out, err = newPacketWriter(w, pcapgo.NgInterface{LinkType: in.LinkType()}); err != nil {
			return 0, "", err
		}
	}
	n := 0
	for count <= 0 || n < count {
		data, ci, err := read()
		if err != nil {
			if stopped() || errors.Is(err, io.EOF) {
				return n, desc, nil
			}
			return n, desc, fmt.Errorf("capture stream: %w", err)
		}
		ci.InterfaceIndex = 0
		if err := out.WritePacket(ci, data); err != nil {
			return n, desc, err
		}
		n++
	}
	return n, desc, nil
}
