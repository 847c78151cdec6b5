package control

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"slices"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"

	"github.com/atmlab/atmlab/devices"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
)

// captured is a frame seen on a captured link.
type captured struct {
	data []byte
	at   time.Duration
}

// capture streams a link's frames, both directions, as pcap until the client
// goes away. Frames are taken at their delivery time; a slow client loses
// frames from its capture, never from the lab.
func (s *Server) capture(ctx context.Context, c net.Conn, endpoint string, cellMode bool) {
	link := s.lab.Network().Link(endpoint)
	if link == nil {
		json.NewEncoder(c).Encode(reply{Error: "no link has this endpoint; name one end of a link, such as h1:eth0"})
		return
	}
	chans, linkType, err := link.Tappers(cellMode)
	if err != nil {
		json.NewEncoder(c).Encode(reply{Error: err.Error()})
		return
	}
	frames := make(chan captured, 8192)
	if err := s.lab.Query(ctx, func() {
		for _, ch := range chans {
			s.subscribe(ch, frames)
		}
	}); err != nil {
		return
	}
	defer s.lab.Do(func() {
		for _, ch := range chans {
			s.unsubscribe(ch, frames)
		}
	})
	if err := json.NewEncoder(c).Encode(reply{}); err != nil {
		return
	}
	w, err := newPacketWriter(c, pcapgo.NgInterface{Name: link.Link.A.String() + "-" + link.Link.B.String(),
		Description: link.CaptureDescription(), LinkType: layers.LinkType(linkType)})
	if err != nil {
		return
	}
	start := s.lab.Start()
	gone := make(chan struct{})
	go func() { io.Copy(io.Discard, c); close(gone) }()
	for {
		select {
		case f := <-frames:
			ts := start.Add(f.at)
			if linkType == devices.LinkTypeERF { // the record carries its own timestamp
				f.data = bytes.Clone(f.data)
				atm.PutERFTime(f.data, ts)
			}
			ci := gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(f.data), Length: len(f.data)}
			if w.WritePacket(ci, f.data) != nil {
				return
			}
		case <-gone:
			return
		case <-ctx.Done():
			return
		}
	}
}

// subscribe adds a capture of ch; call on the lab's model goroutine.
func (s *Server) subscribe(ch emulator.Tapper, to chan<- captured) {
	s.captures[ch] = append(s.captures[ch], to)
	ch.SetTap(func(f *emulator.Frame, at time.Duration) {
		for _, sub := range s.captures[ch] {
			select {
			case sub <- captured{slices.Clone(f.Data), at}: // a copy: the frame's buffer is reused once it is written (emulator.Pool)
			default: // the client is slow: its capture loses the frame, the lab does not
			}
		}
	})
}

// unsubscribe removes a capture of ch; call on the lab's model goroutine.
func (s *Server) unsubscribe(ch emulator.Tapper, to chan<- captured) {
	subs := s.captures[ch]
	for i, sub := range subs {
		if sub == to {
			subs = append(subs[:i], subs[i+1:]...)
			break
		}
	}
	s.captures[ch] = subs
	if len(subs) == 0 {
		delete(s.captures, ch)
		ch.SetTap(nil)
	}
}
