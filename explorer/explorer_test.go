package explorer

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/theory"
	"github.com/atmlab/atmlab/internal/webguard"
)

func get(t *testing.T, h http.Handler, target string, hdr ...string) (int, string) {
	t.Helper()
	r := httptest.NewRequest("GET", target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	if h := r.Header.Get("Host"); h != "" {
		r.Host = h
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	b, _ := io.ReadAll(w.Result().Body)
	return w.Code, string(b)
}

// TestFigures: the sawtooth's neighbours 1444 and 1445 on OC-3c with AAL5
// and LLC/SNAP (atm.md §8): 31 cells at 131.621 Mbit/s, then 32.
func TestFigures(t *testing.T) {
	h := Handler("")
	code, body := get(t, h, "/figures?size=1444&window=48")
	if code != 200 {
		t.Fatalf("figures: %d %s", code, body)
	}
	var f Figures
	if err := json.Unmarshal([]byte(body), &f); err != nil {
		t.Fatal(err)
	}
	d := f.Detail
	if d.PHY != "oc3" || d.AAL != "aal5" || d.Encap != "llc" || d.Cells != 31 || int(d.Ceiling.Goodput/1e3) != 131621 {
		t.Fatalf("detail %+v", d.Row)
	}
	if len(f.Rows) != 20 || f.From != 1396 || f.To != 1492 || len(d.Line) != 97 {
		t.Fatalf("%d rows, window %d..%d with %d points", len(f.Rows), f.From, f.To, len(d.Line))
	}
	// Steps at 1396, 1444 and 1492 (a period of 48 octets).
	var steps []int
	for _, s := range d.Steps {
		steps = append(steps, s.Size)
	}
	if len(steps) != 3 || steps[0] != 1396 || steps[1] != 1444 || steps[2] != 1492 {
		t.Fatalf("steps %v", steps)
	}
	if p := d.Line[1445-f.From]; p.Size != 1445 || p.Cells != 32 || int(p.Goodput/1e3) != 127596 {
		t.Fatalf("line at 1445: %+v", p)
	}
	if len(d.Packets) != 1 || len(d.Packets[0].Cells) != 31 || d.Packets[0].SDU != 1480 {
		t.Fatalf("packets %+v", d.Packets)
	}
	// Another path in detail, and the rows are the same whichever is chosen.
	_, body = get(t, h, "/figures?size=1444&phy=atm25&aal=aal34&encap=vcmux&window=0")
	var g Figures
	json.Unmarshal([]byte(body), &g)
	if g.Detail.PHY != "atm25" || g.Detail.AAL != "aal34" || g.Detail.Encap != "vcmux" || len(g.Detail.Line) != 1 {
		t.Fatalf("detail %+v", g.Detail.Row)
	}
	for i := range f.Rows {
		if f.Rows[i] != g.Rows[i] {
			t.Fatalf("row %d differs: %+v, %+v", i, f.Rows[i], g.Rows[i])
		}
	}
}

// TestBadQuery: every bad parameter is a 400 with a one-line error naming it.
func TestBadQuery(t *testing.T) {
	h := Handler("")
	for q, want := range map[string]string{
		"size=0":       `size "0": want a UDP payload size in bytes from 1 to 65506`,
		"size=x":       `size "x"`,
		"mtu=40":       `mtu "40": want an IP MTU in bytes from 68`,
		"window=99999": `window "99999"`,
		"phy=oc48":     `unknown ATM PHY "oc48": use one of atm25, ds3, e3, oc12, oc3`,
		"aal=aal2":     `unknown AAL "aal2"`,
		"encap=null":   `unknown encapsulation "null"`,
	} {
		code, body := get(t, h, "/figures?"+q)
		if code != 400 || !strings.HasPrefix(body, want) || strings.Count(body, "\n") != 1 {
			t.Errorf("%s: %d %q, want 400 %q", q, code, body, want)
		}
	}
}

// TestPage: the page and its assets are served from the binary, and load
// nothing from elsewhere.
func TestPage(t *testing.T) {
	h := Handler("")
	for _, p := range []string{"/", "/explorer.js", "/explorer.css"} {
		code, body := get(t, h, p)
		if code != 200 || len(body) < 500 {
			t.Fatalf("%s: %d, %d bytes", p, code, len(body))
		}
		if strings.Contains(body, "http://") && !strings.Contains(body, "http://www.w3.org/2000/svg") || strings.Contains(body, "https://") {
			t.Errorf("%s names another site", p)
		}
	}
	// Mounted under a prefix, as the live view does.
	mux := http.NewServeMux()
	mux.Handle("/explorer/", http.StripPrefix("/explorer", h))
	if code, body := get(t, mux, "/explorer/figures?size=100"); code != 200 || !strings.Contains(body, `"size_bytes":100`) {
		t.Fatalf("mounted figures: %d %.100s", code, body)
	}
	if code, _ := get(t, mux, "/explorer/"); code != 200 {
		t.Fatalf("mounted page: %d", code)
	}
}

// TestMeasured: a results folder's points come with the detail, sorted by
// size, failed points left out; a folder that cannot be read says why.
func TestMeasured(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for _, r := range []labrun.Record{
		{Point: labrun.Point{Variant: "base", Experiment: "cip", Test: "UDP_STREAM", Size: 1472}, Result: perf.Result{ThroughputBps: 120e6}, Ceiling: 128e6},
		{Point: labrun.Point{Variant: "base", Experiment: "cip", Test: "UDP_STREAM", Size: 512}, Result: perf.Result{ThroughputBps: 100e6}},
		{Point: labrun.Point{Variant: "base", Experiment: "cip", Test: "UDP_STREAM", Size: 9000}, Result: perf.Result{Error: "message too large"}},
	} {
		b, _ := json.Marshal(r)
		lines = append(lines, string(b))
	}
	os.WriteFile(filepath.Join(dir, "results.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	if err := CheckResults(dir); err != nil {
		t.Fatal(err)
	}
	_, body := get(t, Handler(dir), "/figures?size=1000")
	var f Figures
	json.Unmarshal([]byte(body), &f)
	m := f.Detail.Measured
	if len(m) != 2 || m[0].Size != 512 || m[1].Size != 1472 || m[1].Throughput != 120e6 || m[1].Ceiling != 128e6 || f.Detail.Results != dir {
		t.Fatalf("measured %+v (%s)", m, f.Detail.Results)
	}
	empty := t.TempDir()
	if err := CheckResults(empty); err == nil || !strings.Contains(err.Error(), "no results.jsonl there") {
		t.Fatalf("empty folder: %v", err)
	}
	_, body = get(t, Handler(empty), "/figures?size=1000")
	json.Unmarshal([]byte(body), &f)
	if len(f.Detail.Measured) != 0 || !strings.Contains(f.Detail.Results, "no such file") {
		t.Fatalf("unreadable folder: %+v", f.Detail)
	}
}

// TestServe: the explorer is served read-only behind the local pages'
// guard (internal/webguard): its own address and localhost pass; an IP
// literal of another machine, another name (DNS rebinding), another port,
// another origin, or a write is refused.
func TestServe(t *testing.T) {
	l, err := webguard.Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, l, "", io.Discard) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	addr := l.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	for _, tc := range []struct {
		method, host, origin string
		code                 int
	}{
		{"GET", addr, "", 200},
		{"GET", "localhost:" + port, "http://localhost:" + port, 200},
		{"HEAD", addr, "", 200},
		{"GET", "192.0.2.7:" + port, "", 403},
		{"GET", "evil.example:" + port, "", 403},
		{"GET", "127.0.0.1:1", "", 403},
		{"GET", addr, "http://evil.example", 403},
		{"POST", addr, "", 405},
	} {
		req, _ := http.NewRequest(tc.method, "http://"+addr+"/figures?size=1", nil)
		req.Host = tc.host
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("%s host %q origin %q: %d, want %d", tc.method, tc.host, tc.origin, resp.StatusCode, tc.code)
		}
	}
}

// TestEthernetRows: beside ATM, each Ethernet rate's ceiling at the size,
// harness's (atmlab calc --rate): a 1472-byte payload is one frame of 1538
// wire octets, 957.087 Mbit/s on 1G; 1473 bytes fragment at MTU 1500.
func TestEthernetRows(t *testing.T) {
	h := Handler("")
	for _, c := range []struct {
		target string
		size   int
		frames float64
	}{
		{"/figures", 1472, 1},
		{"/figures?size=1473", 1473, 2},
		{"/figures?size=1473&ethmtu=9000", 1473, 1},
	} {
		code, body := get(t, h, c.target)
		var f Figures
		if code != 200 || json.Unmarshal([]byte(body), &f) != nil || len(f.Ethernet) != len(EtherRates) {
			t.Fatalf("%s: %d %.300s", c.target, code, body)
		}
		for i, r := range f.Ethernet {
			want, err := theory.EthernetCeiling(EtherRates[i], f.EtherMTU, c.size, "udp")
			if err != nil || r.Ceiling != want || r.Rate != int64(EtherRates[i]) || r.Ceiling.Frames != c.frames {
				t.Errorf("%s: row %+v, want %+v (%v)", c.target, r, want, err)
			}
		}
	}
	code, body := get(t, h, "/figures")
	var f Figures
	json.Unmarshal([]byte(body), &f)
	if g := f.Ethernet[2].Ceiling; code != 200 || g.WireBytes != 1538 || g.Goodput < 957.087e6 || g.Goodput > 957.088e6 {
		t.Errorf("1G at 1472 bytes: %+v", g)
	}
	if code, body := get(t, h, "/figures?ethmtu=40"); code != 400 || !strings.Contains(body, "ethmtu") {
		t.Errorf("ethmtu=40: %d %s", code, body)
	}
}
