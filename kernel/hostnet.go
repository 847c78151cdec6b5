//go:build linux

package kernel

import (
	"bytes"
	"io"
	"os"
	"path/filepath"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/atmlab/atmlab/netstat"
)

// hostReader reads one host's kernel counters through descriptors it
// opened once inside the host's namespace: a NETLINK_ROUTE socket for its
// interfaces' and qdiscs' drops, and /proc/net/snmp, netstat and dev,
// which show the namespace they were opened in at every read from the
// start. A snapshot then costs a few reads and no setns or socket (opening
// a netlink handle, three sockets with two setns each, and entering the
// namespace for /proc took most of a stats snapshot).
type hostReader struct {
	nl             *netlink.Handle
	snmp, ext, dev *os.File
	buf, both      []byte
}

// openHostReader opens the counters of the host namespace ns (a name in
// NetnsDir). /proc/net follows the opening thread's namespace only
// through /proc/thread-self (/proc/self is the process's first thread).
func openHostReader(ns string) (*hostReader, error) {
	h, err := netns.GetFromPath(filepath.Join(NetnsDir, ns))
	if err != nil {
		return nil, err
	}
	defer h.Close()
	r := &hostReader{}
	if r.nl, err = netlink.NewHandleAt(h, unix.NETLINK_ROUTE); err != nil {
		return nil, err
	}
	err = inNamespace(h, func() error {
		var err error
		if r.snmp, err = os.Open("/proc/thread-self/net/snmp"); err != nil {
			return err
		}
		if r.ext, err = os.Open("/proc/thread-self/net/netstat"); err != nil {
			return err
		}
		r.dev, err = os.Open("/proc/thread-self/net/dev")
		return err
	})
	if err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

func (r *hostReader) close() {
	if r.nl != nil {
		r.nl.Close()
	}
	for _, f := range []*os.File{r.snmp, r.ext, r.dev} {
		if f != nil {
			f.Close()
		}
	}
}

// read returns f's whole content as the kernel makes it now.
func (r *hostReader) read(f *os.File) ([]byte, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	r.buf = r.buf[:0]
	for {
		if len(r.buf) == cap(r.buf) {
			r.buf = append(r.buf, make([]byte, 4096)...)[:len(r.buf)]
		}
		n, err := f.Read(r.buf[len(r.buf):cap(r.buf)])
		r.buf = r.buf[:len(r.buf)+n]
		if err == io.EOF || (err == nil && n == 0) {
			return r.buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// counters reads the host's own UDP and TCP counters (its TCP's receive
// drops among them) and its interfaces' receive drops.
func (r *hostReader) counters() (netstat.Counters, error) {
	b, err := r.read(r.snmp)
	if err != nil {
		return netstat.Counters{}, err
	}
	r.both = append(r.both[:0], b...)
	if b, err = r.read(r.ext); err != nil {
		return netstat.Counters{}, err
	}
	r.both = append(r.both, b...)
	c, err := netstat.Parse(bytes.NewReader(r.both))
	if err != nil {
		return c, err
	}
	if b, err = r.read(r.dev); err != nil {
		return c, err
	}
	c.IfaceRxDrops, err = netstat.ParseDev(bytes.NewReader(b))
	return c, err
}

// drops returns what the host's kernel dropped on its way into the
// emulator through its interface dev: at the TAP's ring (tx_dropped: the
// emulator did not read it in time), and in its qdisc, dropped (a sender
// faster than its link) or requeued (handed back by the TAP's full ring).
func (r *hostReader) drops(dev string) (tap, qdisc, requeues uint64) {
	link, err := r.nl.LinkByName(dev)
	if err != nil {
		return 0, 0, 0
	}
	if st := link.Attrs().Statistics; st != nil {
		tap = st.TxDropped
	}
	qdiscs, _ := r.nl.QdiscList(link)
	for _, q := range qdiscs {
		if st := q.Attrs().Statistics; st != nil && st.Queue != nil {
			qdisc += uint64(st.Queue.Drops)
			requeues += uint64(st.Queue.Requeues)
		}
	}
	return tap, qdisc, requeues
}
