package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/atmlab/atmlab/wireshark"
)

// run executes the CLI in-process and returns stdout, stderr and the error.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	root := newRoot()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

func TestValidate(t *testing.T) {
	out, _, err := run(t, "validate", "../../topologies/sw100.yaml")
	if err != nil || !strings.Contains(out, "lab sw100 is valid: 3 nodes, 2 links") {
		t.Fatalf("validate sw100: %v %q", err, out)
	}
	out, _, err = run(t, "validate", "-o", "json", "../../topologies/sw100.yaml")
	var v struct {
		Valid bool `json:"valid"`
	}
	if err != nil || json.Unmarshal([]byte(out), &v) != nil || !v.Valid {
		t.Fatalf("validate -o json: %v %q", err, out)
	}

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("name: x\ntopology:\n  nodes:\n    h1: {kind: host, ipv4: 300.1.1.1/24}\n  links: [{endpoints: [\"h1:eth0\", \"h2:eth0\"]}]\n"), 0o644)
	_, errOut, err := run(t, "validate", bad)
	var u usageError
	if err == nil || errors.As(err, &u) {
		t.Fatalf("validate bad.yaml: error %v, want a runtime (exit 1) error", err)
	}
	for _, want := range []string{bad + ":4: topology.nodes.h1.ipv4: bad IPv4 address", bad + ":5: topology.links[0].endpoints[1]: \"h2:eth0\": no node named h2"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// A loop of switches is valid but warned about, naming it (it passed
// silently, then stormed).
func TestValidateWarnsOfLoops(t *testing.T) {
	file := filepath.Join(t.TempDir(), "loop.yaml")
	os.WriteFile(file, []byte("name: x\ntopology:\n  nodes:\n    h1: {kind: host, ipv4: 10.0.0.1/24}\n    sw1: {kind: switch}\n  links:\n    - endpoints: [\"h1:eth0\", \"sw1:p1\"]\n    - endpoints: [\"sw1:p3\", \"sw1:p4\"]\n"), 0o644)
	out, errOut, err := run(t, "validate", file)
	if err != nil || !strings.Contains(out, "lab x is valid: 2 nodes, 2 links (1 warning(s))") ||
		!strings.Contains(errOut, file+":8: warning: topology.links: loop: link sw1:p3-sw1:p4 joins sw1 to itself") {
		t.Fatalf("validate: %v\nstdout %q\nstderr %q", err, out, errOut)
	}
	out, _, err = run(t, "validate", "-o", "json", file)
	var v struct {
		Valid    bool     `json:"valid"`
		Warnings []string `json:"warnings"`
	}
	if err != nil || json.Unmarshal([]byte(out), &v) != nil || !v.Valid || len(v.Warnings) != 1 || !strings.Contains(v.Warnings[0], "joins sw1 to itself") {
		t.Fatalf("validate -o json: %v %q", err, out)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"validate"},
		{"validate", "a", "b"},
		{"exec", "lab"},
		{"stats", "--frobnicate", "x"},
		{"validate", "-o", "xml", "../../topologies/sw100.yaml"},
		{"capture", "lab", "h1:eth0"},
	} {
		_, _, err := run(t, args...)
		var u usageError
		if !errors.As(err, &u) {
			t.Errorf("atmlab %s: error %v, want a usage error (exit 2)", strings.Join(args, " "), err)
		}
	}
}

func TestSimCSMA(t *testing.T) {
	out, _, err := run(t, "sim", "csma", "--stations", "24", "--frame", "64", "--rate", "100M", "--duration", "1s", "--seed", "5", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Utilization          float64 `json:"utilization"`
		CollisionsPerSuccess float64 `json:"collisions_per_success"`
		DroppedFraction      float64 `json:"dropped_fraction"`
		LongestRun           int     `json:"longest_run"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// Reference table, 24 stations, 64 B: 0.698, 0.161 collisions per success.
	if r.Utilization < 0.66 || r.Utilization > 0.73 || r.CollisionsPerSuccess < 0.11 || r.DroppedFraction <= 0 || r.LongestRun < 10 {
		t.Fatalf("sim csma -o json = %+v", r)
	}
	again, _, _ := run(t, "sim", "csma", "--stations", "24", "--frame", "64", "--rate", "100M", "--duration", "1s", "--seed", "5", "-o", "json")
	if again != out {
		t.Fatal("the same seed gave different output")
	}
	table, _, err := run(t, "sim", "csma", "--stations", "2")
	if err != nil || !strings.Contains(table, "collisions per success") {
		t.Fatalf("table output: %v %s", err, table)
	}
	if _, _, err := run(t, "sim", "csma", "--frame", "9000"); err == nil {
		t.Fatal("--frame 9000 accepted")
	}
}

func TestPerfOnLoopback(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	port := freePort(t)
	served := make(chan error, 1)
	go func() {
		root := newRoot()
		root.SetArgs([]string{"perf", "server", "-p", port})
		root.SetErr(new(bytes.Buffer))
		served <- root.ExecuteContext(ctx)
	}()
	var out string
	var err error
	for range 250 { // until the server listens
		time.Sleep(20 * time.Millisecond)
		if out, _, err = run(t, "perf", "client", "-H", "127.0.0.1", "-p", port, "-t", "TCP_RR", "-l", "0.3", "-o", "json"); err == nil {
			break
		}
		select {
		case err := <-served:
			t.Fatalf("perf server ended: %v", err)
		default:
		}
	}
	var r struct {
		Test string  `json:"test"`
		TPS  float64 `json:"transactions_per_sec"`
		Lat  struct {
			P50, P90, P99, Max float64
		} `json:"latency_us"`
	}
	if err != nil || json.Unmarshal([]byte(out), &r) != nil || r.Test != "TCP_RR" || r.TPS <= 0 || r.Lat.P99 <= 0 {
		t.Fatalf("perf client TCP_RR: %v\n%s", err, out)
	}
	out, _, err = run(t, "perf", "client", "-H", "127.0.0.1", "-p", port, "-t", "TCP_STREAM", "-l", "0.2", "-o", "csv")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); err != nil || len(lines) != 2 || !strings.HasPrefix(lines[1], "TCP_STREAM,127.0.0.1,") {
		t.Fatalf("perf client -o csv: %v\n%s", err, out)
	}
	out, _, err = run(t, "perf", "client", "-H", "127.0.0.1", "-p", port, "-t", "UDP_STREAM", "-l", "0.2", "-m", "65535")
	if err != nil || !strings.Contains(out, "message too large") {
		t.Fatalf("UDP_STREAM 65535: %v\n%s", err, out)
	}
	if _, _, err := run(t, "perf", "client", "-t", "TCP_RR"); err == nil {
		t.Fatal("client without -H accepted")
	}
	out, _, err = run(t, "perf", "client", "-H", "127.0.0.1", "-p", port, "-t", "TCP_RR", "-l", "0.2", "-I", "95,50", "--iterations", "4,3", "-o", "json")
	var c struct {
		Confidence struct {
			Iterations int     `json:"iterations"`
			Achieved   float64 `json:"width_achieved"`
			Mean       float64 `json:"mean"`
		} `json:"confidence"`
		TPS float64 `json:"transactions_per_sec"`
	}
	if err != nil || json.Unmarshal([]byte(out), &c) != nil || c.Confidence.Iterations < 3 || c.Confidence.Iterations > 4 || c.TPS != c.Confidence.Mean {
		t.Fatalf("perf client -I 95,50 --iterations 4,3: %v\n%s", err, out)
	}
	if _, _, err := run(t, "perf", "client", "-H", "127.0.0.1", "-I", "90,5"); err == nil {
		t.Fatal("-I 90,5 accepted")
	}
}

// freePort returns a TCP port on loopback that nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

func TestPerfMemcpy(t *testing.T) {
	out, _, err := run(t, "perf", "memcpy", "-m", "65536", "-l", "0.05")
	if err != nil || !strings.Contains(out, "Mbit/s") {
		t.Fatalf("perf memcpy: %v %q", err, out)
	}
}

func TestCalc(t *testing.T) {
	out, _, err := run(t, "calc", "--rate", "100M", "1472", "8192")
	if err != nil || !strings.Contains(out, "95.709") || !strings.Contains(out, "95.835") {
		t.Fatalf("calc: %v\n%s", err, out)
	}
	out, _, err = run(t, "calc", "--proto", "tcp", "--rate", "1G", "-o", "json", "1448")
	if err != nil || !strings.Contains(out, `"goodput_bps": 941482`) {
		t.Fatalf("calc -o json: %v\n%s", err, out)
	}
	out, _, err = run(t, "calc", "-o", "csv", "1472")
	if err != nil || !strings.HasPrefix(out, "rate_bps,mtu,proto,payload_bytes") || !strings.Contains(out, "100000000,1500,udp,1472,1,1538,") {
		t.Fatalf("calc -o csv: %v\n%s", err, out)
	}
	if _, _, err := run(t, "calc", "--proto", "dccp", "100"); err == nil {
		t.Fatal("dccp accepted")
	}
	out, _, err = run(t, "calc", "--proto", "sctp", "--rate", "1G", "--mtu", "9000", "-o", "csv", "8952")
	if err != nil || !strings.Contains(out, "1000000000,9000,sctp,8952,1,9038,") {
		t.Fatalf("calc --proto sctp: %v\n%s", err, out)
	}
	// MPLS: one label on every frame (mpls.md §1).
	out, _, err = run(t, "calc", "--labels", "1", "--mtu", "1496", "1468")
	if err != nil || !strings.Contains(out, "95.449") || !strings.Contains(out, "1 MPLS label") {
		t.Fatalf("calc --labels: %v\n%s", err, out)
	}
	// A TCP stream's message is its share of full segments: a 1-byte one
	// printed "frames 1, wire B 1" (and cells 0 on ATM).
	out, _, err = run(t, "calc", "--proto", "tcp", "1")
	if err != nil || !strings.Contains(out, "a stream of 1448-byte segments") || !strings.Contains(out, "0.0006906   1.062") {
		t.Fatalf("calc --proto tcp 1: %v\n%s", err, out)
	}
	out, _, err = run(t, "calc", "--phy", "oc3", "--proto", "tcp", "1")
	if err != nil || !strings.Contains(out, "0.0001096  0.02103   1.115") {
		t.Fatalf("calc --phy oc3 --proto tcp 1: %v\n%s", err, out)
	}
	// Sizes that do not fit are errors that say so: a labelled 1500-byte
	// packet (the routers refuse it), a UDP payload over 65507, an AAL SDU
	// over 65535; a small labelled datagram fits.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--labels", "1", "1472"}, "payload 1472 does not fit: a 1500-byte IP packet with 1 label(s) is 1504 bytes, over the routers' 1500-byte MTU; give --mtu 1496"},
		{[]string{"--proto", "tcp", "--labels", "2", "100"}, "give --mtu 1492"},
		{[]string{"65508"}, "a UDP payload of 65508 bytes does not fit"},
		{[]string{"--phy", "oc3", "--mtu", "65535", "100"}, "--mtu 65535 does not fit: with llc an AAL SDU of 65543 bytes is over 65535; give --mtu 65527 or less"},
	} {
		_, _, err := run(t, append([]string{"calc"}, tc.args...)...)
		var u usageError
		if err == nil || !errors.As(err, &u) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("calc %v: %v, want a usage error containing %q", tc.args, err, tc.want)
		}
	}
	if out, _, err = run(t, "calc", "--labels", "1", "100"); err != nil || !strings.Contains(out, "58.824") {
		t.Fatalf("calc --labels 1 100: %v\n%s", err, out)
	}
	// On ATM a label rides inside LLC/SNAP: 100 octets of UDP take 4 cells
	// with it, 3 without; VC-mux cannot carry it.
	if out, _, err = run(t, "calc", "--phy", "oc3", "--labels", "1", "100"); err != nil || !strings.Contains(out, "1 MPLS label") || !strings.Contains(out, "      4     212") {
		t.Fatalf("calc --phy oc3 --labels 1 100: %v\n%s", err, out)
	}
	if _, _, err = run(t, "calc", "--phy", "oc3", "--encap", "vcmux", "--labels", "1", "100"); err == nil || !strings.Contains(err.Error(), "labelled packets need LLC/SNAP") {
		t.Errorf("calc --encap vcmux --labels 1: %v, want refused", err)
	}
	// ATM: the sawtooth's neighbours 1444 and 1445 on OC-3c (atm.md §8).
	out, _, err = run(t, "calc", "--phy", "oc3", "1444", "1445")
	if err != nil || !strings.Contains(out, "131.621") || !strings.Contains(out, "127.596") || !strings.Contains(out, "MTU 9180") {
		t.Fatalf("calc --phy oc3: %v\n%s", err, out)
	}
	out, _, err = run(t, "calc", "--phy", "oc3", "-o", "csv", "--aal", "aal34", "1472")
	if err != nil || !strings.Contains(out, ",oc3/aal34/llc,35") {
		t.Fatalf("calc --aal aal34 -o csv: %v\n%s", err, out)
	}
	out, _, err = run(t, "calc", "--phy", "oc3", "--sawtooth", "-o", "json", "900", "1000")
	if err != nil || !strings.Contains(out, `"size_bytes": 916`) || !strings.Contains(out, `"size_bytes": 964`) {
		t.Fatalf("calc --sawtooth: %v\n%s", err, out)
	}
	for _, bad := range [][]string{{"--phy", "oc48", "100"}, {"--phy", "oc3", "--aal", "aal2", "100"}, {"--sawtooth", "1", "100"}} {
		if _, _, err := run(t, append([]string{"calc"}, bad...)...); err == nil {
			t.Errorf("calc %v accepted", bad)
		}
	}
}

// capture --lua-dissector writes the embedded AAL3/4 dissector without a
// lab and says how to load it; with a lab name it is a usage error.
func TestCaptureLuaDissector(t *testing.T) {
	path := filepath.Join(t.TempDir(), "aal34.lua")
	out, _, err := run(t, "capture", "--lua-dissector", path)
	if err != nil || !strings.Contains(out, "tshark -X lua_script:"+path) {
		t.Fatalf("capture --lua-dissector: %v\n%s", err, out)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, wireshark.AAL34) || !bytes.Contains(got, []byte("Proto(\"aal34\"")) {
		t.Errorf("the file written is not the dissector: %v", err)
	}
	if _, _, err := run(t, "capture", "lab", "h1:eth0", "--lua-dissector", path); err == nil {
		t.Errorf("capture with a lab and --lua-dissector: no error")
	}
}

// TestMain lets a test run the real atmlab, main and its signal handling,
// as a child process of the test binary.
func TestMain(m *testing.M) {
	if os.Getenv("ATMLAB_TEST_MAIN") == "1" {
		os.Args = append([]string{"atmlab"}, os.Args[1:]...)
		if os.Getenv("ATMLAB_TEST_ARMED") == "1" {
			armed = func() { fmt.Fprintln(os.Stderr, armedLine) }
		}
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// armedLine is what a child atmlab prints on stderr once signals cancel its
// context (ATMLAB_TEST_ARMED=1).
const armedLine = "atmlab-test: signals armed"

// A command whose output's reader has gone (`atmlab version -o json |
// head -1`) is not killed by SIGPIPE: its write fails, and it ends
// quietly with the status a shell gives a pipe's writer it killed, 141. A
// command that is removing what it made goes on doing so (up:
// TestUpStopsCleanlyWithItsOutputClosed, integration).
func TestClosedOutputEndsQuietly(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // nobody reads: the first write fails
	cmd := exec.Command(os.Args[0], "version", "-o", "json")
	cmd.Env = append(os.Environ(), "ATMLAB_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	err = cmd.Run()
	w.Close()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("version into a closed pipe: %v, want exit status 141", err)
	}
	if st := exit.Sys().(syscall.WaitStatus); st.Signaled() || st.ExitStatus() != 141 || stderr.Len() > 0 {
		t.Errorf("version into a closed pipe: signaled %v (%v), status %d, stderr %q; want status 141 and nothing said",
			st.Signaled(), st.Signal(), st.ExitStatus(), stderr.String())
	}
}

// sim csma ends promptly on SIGINT and SIGTERM instead of computing on (it
// caught the signals and never acted). validate, which takes 0.2 s for a
// lab of the most nodes, ended by itself around a signal sent 300 ms in
// as often as not under load: it is checked below with a context
// cancelled before it starts.
func TestSignals(t *testing.T) {
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		cmd := exec.Command(os.Args[0], "sim", "csma", "--stations", "10", "--duration", "100000h")
		cmd.Env = append(os.Environ(), "ATMLAB_TEST_MAIN=1", "ATMLAB_TEST_ARMED=1")
		var out bytes.Buffer
		armedR, armedW := io.Pipe()
		both := io.MultiWriter(&out, armedW) // one writer for both: exec copies on one goroutine
		cmd.Stdout, cmd.Stderr = both, both
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ready := make(chan bool, 1)
		go func() { // the child's first line: its signals are armed
			line, _ := bufio.NewReader(armedR).ReadString('\n')
			ready <- strings.TrimSpace(line) == armedLine
			io.Copy(io.Discard, armedR)
		}()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait(); armedW.Close() }()
		select {
		case <-done:
			t.Fatalf("sim csma for 100000 h ended by itself: %q", out.String())
		case ok := <-ready:
			if !ok {
				t.Fatalf("the child's first line is not %q: %q", armedLine, out.String())
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("the child did not arm its signals in 10 s: %q", out.String())
		}
		start := time.Now()
		cmd.Process.Signal(sig)
		select {
		case <-done:
			if took := time.Since(start); took > time.Second || !strings.Contains(out.String(), "atmlab: interrupted") {
				t.Errorf("atmlab sim, %v: ended after %v saying %q", sig, took, out.String())
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("atmlab sim still running 10 s after %v", sig)
		}
	}
	// A context cancelled before the command starts: nothing is computed.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"validate", "../../topologies/sw100.yaml"})
	if err := root.ExecuteContext(ctx); !errors.Is(err, errInterrupted) || out.Len() > 0 {
		t.Errorf("validate after the signal: %v %q", err, out.String())
	}
}

// A variant that sets one host's aal: aal34 on a PVC it shares fails
// validate at its file and line, and lab run before anything is measured
// (no results folder).
func TestBadVariantFailsEarly(t *testing.T) {
	src, err := os.ReadFile("../../topologies/cernet-atm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	all := "      - {link: \"h1:eth0\", aal: aal34}\n      - {link: \"h2:eth0\", aal: aal34}\n      - {link: \"s1:eth0\", aal: aal34}\n      - {link: \"s2:eth0\", aal: aal34}\n"
	if !bytes.Contains(src, []byte(all)) {
		t.Fatal("cernet-atm.yaml's aal34 variant changed: update this test")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "bad.yaml")
	os.WriteFile(file, bytes.Replace(src, []byte(all), []byte("      - {link: \"h1:eth0\", aal: aal34}\n"), 1), 0o644)
	want := file + ":26: topology.links: variant aal34: h1:eth0 and h2:eth0 share a PVC but their links' aal/encap differ (aal34/llc on line 25, aal5/llc); make them equal"
	_, errOut, err := run(t, "validate", file)
	if err == nil || !strings.Contains(errOut, want+"\n") {
		t.Fatalf("validate: %v\nstderr %q\nwant %q", err, errOut, want)
	}
	out := filepath.Join(dir, "results")
	_, _, err = run(t, "lab", "run", "--clock", "virtual", "--quick", "--out", out, file)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("lab run: %v, want %q", err, want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("lab run of a bad variant made %s: %v", out, err)
	}
}

// perf client with confidence intervals fails when its test does (here
// no server answers): before, the error was dropped and it exited 0.
func TestPerfClientConfidentFailsWithoutServer(t *testing.T) {
	port := freePort(t)
	_, _, err := run(t, "perf", "client", "-H", "127.0.0.1", "-p", port, "-I", "99,5", "-l", "0.1")
	if err == nil {
		t.Fatal("perf client -I with no server: no error")
	}
}
