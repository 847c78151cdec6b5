//go:build integration

package test

import (
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator"
)

// Issue 13, must-show 4 (second half): `delay: 1h` at line rate keeps the
// emulator's memory flat, on an Ethernet link (the impairment pipe's 1000
// frames) and on an OC-3c ATM link (192,000 cells); everything beyond is
// counted as limit drops. Before the bounds, memory grew 14.7 MB a second
// on the 100M link, and an OC-3c link's cells (353,207 a second) grew it
// with no end either.
func TestLongDelayMemory(t *testing.T) {
	requireRoot(t, "iperf")
	for _, tc := range []struct {
		name, link string
	}{
		{"ethernet", `ethernet: {rate: 100M}`},
		{"atm", `atm: {phy: oc3}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := up(t, `name: NAME
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
  links:
    - endpoints: ["h1:eth0", "h2:eth0"]
      `+tc.link+`
      impair: {delay: 1h}
`)
			if tc.name == "ethernet" { // an ARP request would take an hour
				mac := strings.Fields(string(r.exec("h2", "ip", "-o", "link", "show", "eth0")))
				i := slices.Index(mac, "link/ether")
				if i < 0 || i+1 >= len(mac) {
					t.Fatalf("no MAC for h2 in %v", mac)
				}
				r.exec("h1", "ip", "neigh", "replace", "10.0.0.2", "lladdr", mac[i+1], "dev", "eth0", "nud", "permanent")
			}
			client := r.start("h1", "iperf", "-c", "10.0.0.2", "-u", "-b", "200M", "-l", "1472", "-t", "8")
			time.Sleep(3 * time.Second)
			early := rssKB(t, r)
			time.Sleep(5 * time.Second)
			late := rssKB(t, r)
			client.Process.Kill()
			client.Wait()
			var row emulator.PortStats
			for _, p := range r.stats().Ports {
				if p.Port == "h1:eth0" {
					row = p
				}
			}
			drops := row.ImpairDrops // limit drops, with no loss set
			t.Logf("%s, delay 1h at line rate: RSS %d KB at 3 s, %d KB at 8 s; %d frames sent, %d %s dropped at the pipe's limit",
				tc.name, early, late, row.TxFrames, drops, map[string]string{"ethernet": "frames", "atm": "cells"}[tc.name])
			if late-early > 8<<10 {
				t.Errorf("memory grew %d KB in 5 s of delay 1h at line rate, want flat (under 8 MB)", late-early)
			}
			if drops == 0 {
				t.Errorf("no limit drops: the pipe did not fill (%+v)", row)
			}
		})
	}
}

// rssKB is the atmlab process's resident memory in KB.
func rssKB(t *testing.T, r *running) int {
	t.Helper()
	out, err := exec.Command("ps", "-o", "rss=", "-p", fmt.Sprint(r.cmd.Process.Pid)).Output()
	n, err2 := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || err2 != nil {
		t.Fatalf("ps: %v %v", err, err2)
	}
	return n
}
