//go:build linux

package kernel

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/atmlab/atmlab/topologies"
)

// ccList is the host-wide list of TCP congestion controls that namespaces
// other than the first may choose, with the records of what atmlab added to
// it. Each lab that needs a control atmlab added has a record, <lab>.cc in
// dir, written before the list changes: teardown, or `down` after kill -9,
// takes back the lab's controls that no other lab's record still lists.
// One lock (cc.lock in dir) orders every change, so labs never undo each
// other's additions. A control that was on the list before atmlab added it
// is never recorded, so never removed.
type ccList struct {
	sysctl string // /proc/sys/net/ipv4/tcp_allowed_congestion_control
	dir    string // where the records and the lock live
}

var hostCC = ccList{sysctl: "/proc/sys/net/ipv4/tcp_allowed_congestion_control", dir: RunDir}

// wantedCongestionControls lists the congestion controls the lab's hosts ask for.
func wantedCongestionControls(lab *topologies.Lab) []string {
	var want []string
	for _, n := range lab.Nodes {
		for _, s := range n.Sysctls {
			if s.Key == "net.ipv4.tcp_congestion_control" && !slices.Contains(want, s.Value) {
				want = append(want, s.Value)
			}
		}
	}
	return want
}

func (c ccList) record(lab string) string { return filepath.Join(c.dir, lab+".cc") }

// allow adds to the list the controls in want that it lacks, and records
// for lab every control it needs that atmlab added. note tells the user
// what changed.
func (c ccList) allow(lab string, want []string) (note string, err error) {
	if len(want) == 0 {
		return "", nil
	}
	l, err := waitLock(filepath.Join(c.dir, "cc.lock"))
	if err != nil {
		return "", err
	}
	defer l.release()
	cur, err := c.read()
	if err != nil {
		return "", err
	}
	others, err := c.othersNeed(lab)
	if err != nil {
		return "", err
	}
	var need, add []string
	for _, w := range want {
		switch {
		case !slices.Contains(cur, w):
			add = append(add, w)
			need = append(need, w)
		case slices.Contains(others, w): // added for another lab: this one needs it too
			need = append(need, w)
		}
	}
	if len(need) == 0 {
		return "", nil
	}
	if err := os.WriteFile(c.record(lab), []byte(strings.Join(need, "\n")+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("record congestion controls for %s: %w", lab, err)
	}
	if len(add) == 0 {
		return "", nil
	}
	if err := os.WriteFile(c.sysctl, []byte(strings.Join(append(cur, add...), " ")), 0); err != nil {
		c.takeBack(lab)
		return "", fmt.Errorf("allow congestion control %s for the lab's hosts: %w (is the module available? see /proc/sys/net/ipv4/tcp_available_congestion_control)", strings.Join(add, ", "), err)
	}
	return fmt.Sprintf("allowed TCP congestion control %s for namespaces until the lab stops", strings.Join(add, ", ")), nil
}

// restore takes back lab's recorded controls that no other lab needs and
// removes its record; without a record it changes nothing.
func (c ccList) restore(lab string) error {
	if _, err := os.Stat(c.record(lab)); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	l, err := waitLock(filepath.Join(c.dir, "cc.lock"))
	if err != nil {
		return err
	}
	defer l.release()
	return c.takeBack(lab)
}

// takeBack is restore under the lock.
func (c ccList) takeBack(lab string) error {
	mine, err := readRecord(c.record(lab))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	others, err := c.othersNeed(lab)
	if err != nil {
		return err
	}
	cur, err := c.read()
	if err != nil {
		return err
	}
	keep := slices.DeleteFunc(slices.Clone(cur), func(name string) bool {
		return slices.Contains(mine, name) && !slices.Contains(others, name)
	})
	if len(keep) != len(cur) {
		if err := os.WriteFile(c.sysctl, []byte(strings.Join(keep, " ")), 0); err != nil {
			return fmt.Errorf("restore %s: %w", c.sysctl, err)
		}
	}
	return os.Remove(c.record(lab))
}

func (c ccList) read() ([]string, error) {
	b, err := os.ReadFile(c.sysctl)
	return strings.Fields(string(b)), err
}

// othersNeed lists the controls in every record but lab's.
func (c ccList) othersNeed(lab string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(c.dir, "*.cc"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		if f == c.record(lab) {
			continue
		}
		names, err := readRecord(f)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		out = append(out, names...)
	}
	return out, nil
}

func readRecord(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	return strings.Fields(string(b)), err
}
