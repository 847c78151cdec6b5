package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/atmlab/atmlab/topologies/labfile"
	"github.com/atmlab/atmlab/topologies/settings"
	"github.com/atmlab/atmlab/wireshark"
)

// replyTimeout bounds the wait for a lab's first reply line: a lab busy
// beyond that is reported, not waited for.
var replyTimeout = 10 * time.Second

// dial connects to lab's control socket at path and sends req. It gives up
// when ctx ends (a signal) or the lab does not answer within replyTimeout.
func dial(ctx context.Context, lab, path string, req request) (net.Conn, *bufio.Reader, reply, error) {
	if err := labfile.CheckLabName(lab); err != nil {
		return nil, nil, reply{}, err
	}
	// A request that cannot be written is said at once, not after the
	// server's wait for a request that never comes.
	line, err := json.Marshal(req)
	if err != nil {
		return nil, nil, reply{}, fmt.Errorf("cannot write the %s request: %w", req.Op, err)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	switch {
	case errors.Is(err, os.ErrPermission):
		return nil, nil, reply{}, fmt.Errorf("permission denied on %s: lab %s is root's (or another user's); rerun with sudo", path, lab)
	case err != nil && ctx.Err() != nil:
		return nil, nil, reply{}, ctx.Err()
	case err != nil:
		return nil, nil, reply{}, fmt.Errorf("lab %s is not running (no answer on %s): start it with `atmlab up`", lab, path)
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	c.SetDeadline(time.Now().Add(replyTimeout))
	defer c.SetDeadline(time.Time{})
	// A server that refuses the peer answers before it reads the request and
	// closes: then the write fails, but the answer is there to read.
	_, werr := c.Write(append(line, '\n'))
	r := bufio.NewReader(c)
	line, err = r.ReadBytes('\n')
	var rep reply
	switch {
	case ctx.Err() != nil:
		err = ctx.Err()
	case err != nil && werr != nil:
		err = werr
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = fmt.Errorf("lab %s did not answer within %v on %s (its emulator may be overloaded; see its CPU in the next stats)", lab, replyTimeout, path)
	case err == nil:
		if err = json.Unmarshal(line, &rep); err == nil && rep.Error != "" {
			err = errors.New(rep.Error)
		}
	default:
		err = fmt.Errorf("lab %s closed %s without an answer: %w", lab, path, err)
	}
	if err != nil {
		c.Close()
		return nil, nil, rep, err
	}
	return c, r, rep, nil
}

// QueryStats asks the lab answering at path for its counters.
func QueryStats(ctx context.Context, lab, path string) (*Stats, error) {
	c, _, rep, err := dial(ctx, lab, path, request{Op: "stats"})
	if err != nil {
		return nil, err
	}
	c.Close()
	return rep.Stats, nil
}

// SetLink asks the lab answering at path to apply a change (atmlab set).
// A change outside the lab file's ranges is refused here, before the lab
// is asked.
func SetLink(ctx context.Context, lab, path, endpoint, direction string, c settings.Change) (*Changed, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	conn, _, rep, err := dial(ctx, lab, path, request{Op: "set", Endpoint: endpoint, Direction: direction, Change: &c})
	if err != nil {
		return nil, err
	}
	conn.Close()
	return rep.Set, nil
}

// Capture copies a running lab's link, named by one endpoint, to w until
// ctx ends or count frames (if count > 0) were written: pcap, or pcapng
// for an AAL3/4 link's cells, which aal34 reports (Wireshark decodes them
// with atmlab's Lua dissector). It returns the number of frames written.
func Capture(ctx context.Context, lab, path, endpoint string, cellMode bool, w io.Writer, count int) (n int, aal34 bool, err error) {
	c, r, _, err := dial(ctx, lab, path, request{Op: "capture", Endpoint: endpoint, Cells: cellMode})
	if err != nil {
		return 0, false, fmt.Errorf("capture %s: %w", endpoint, err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	n, desc, err := copyCapture(r, w, count, func() bool { return ctx.Err() != nil })
	return n, strings.HasPrefix(desc, wireshark.AAL34Description), err
}
