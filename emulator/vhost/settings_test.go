package vhost

import (
	"testing"

	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
)

// A virtual host's TCP sockets start from Linux's default buffers
// (tcp_wmem "4096 16384 4194304", tcp_rmem "4096 131072 6291456"), not
// netstack's 1 MiB: with a 1 MiB receive buffer every connection opens a
// window of about 700 segments at once, and streams that share a full
// uplink overshoot its queue by hundreds of segments in slow start.
func TestHostsStartFromLinuxDefaultBuffers(t *testing.T) {
	d := Defaults()
	if d.WMem != [3]int{4096, 16384, 4194304} || d.RMem != [3]int{4096, 131072, 6291456} {
		t.Errorf("defaults tcp_wmem %v tcp_rmem %v, want Linux's [4096 16384 4194304] and [4096 131072 6291456]", d.WMem, d.RMem)
	}
	h := build(t, 1).Hosts["h2"]
	s, err := h.Socket(tcp.ProtocolNumber)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	o := s.EP.SocketOptions()
	if snd, rcv := o.GetSendBufferSize(), o.GetReceiveBufferSize(); snd != 16384 || rcv != 131072 {
		t.Errorf("a new socket's buffers: send %d, receive %d; want 16384 and 131072", snd, rcv)
	}
	// A host's sysctls still win.
	if err := d.Sysctl("net.ipv4.tcp_rmem", "4096 1048576 4194304"); err != nil || d.RMem != [3]int{4096, 1048576, 4194304} {
		t.Errorf("tcp_rmem sysctl: %v, %v", err, d.RMem)
	}
}
