package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/atmlab/atmlab/explorer"
	"github.com/atmlab/atmlab/harness/theory"
	"github.com/atmlab/atmlab/internal/headless"
	"github.com/atmlab/atmlab/internal/labtest"
)

// calcFigures runs `atmlab calc -o json` and `-o csv` for one ATM path
// over sizes and returns each size's ceiling and cell count as printed.
func calcFigures(t *testing.T, phy, aal, encap string, mtu int, sizes []int) ([]theory.Ceiling, []string) {
	t.Helper()
	args := []string{"calc", "--phy", phy, "--aal", aal, "--encap", encap, "--mtu", strconv.Itoa(mtu)}
	for _, n := range sizes {
		args = append(args, strconv.Itoa(n))
	}
	out, _, err := run(t, append(args, "-o", "json")...)
	var j struct {
		Ceilings []theory.Ceiling `json:"ceilings"`
	}
	if err != nil || json.Unmarshal([]byte(out), &j) != nil || len(j.Ceilings) != len(sizes) {
		t.Fatalf("calc %s/%s/%s -o json: %v\n%.300s", phy, aal, encap, err, out)
	}
	out, _, err = run(t, append(args, "-o", "csv")...)
	recs, _ := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != len(sizes)+1 || recs[0][9] != "cells" {
		t.Fatalf("calc %s/%s/%s -o csv: %v\n%.300s", phy, aal, encap, err, out)
	}
	var cells []string
	for _, r := range recs[1:] {
		cells = append(cells, r[9])
	}
	return j.Ceilings, cells
}

// etherFigures runs `atmlab calc --rate R -o json` over sizes.
func etherFigures(t *testing.T, rate string, mtu int, sizes []int) []theory.Ceiling {
	t.Helper()
	args := []string{"calc", "--rate", rate, "--mtu", strconv.Itoa(mtu), "-o", "json"}
	for _, n := range sizes {
		args = append(args, strconv.Itoa(n))
	}
	out, _, err := run(t, args...)
	var j struct {
		Ceilings []theory.Ceiling `json:"ceilings"`
	}
	if err != nil || json.Unmarshal([]byte(out), &j) != nil || len(j.Ceilings) != len(sizes) {
		t.Fatalf("calc --rate %s -o json: %v\n%.300s", rate, err, out)
	}
	return j.Ceilings
}

// TestExplorerMatchesCalc: the explorer's JSON carries `atmlab calc`'s
// figures, for every PHY, AAL and encapsulation and every Ethernet rate:
// every size from 1 to 9180 at ATM's MTU (one request answers all twenty
// paths and four rates), sizes that fragment sampled up to 65506, and a
// small MTU.
func TestExplorerMatchesCalc(t *testing.T) {
	h := explorer.Handler("")
	for _, tc := range []struct {
		mtu   int
		sizes []int
	}{
		{9180, span(1, 9180, 1)},
		{9180, span(9181, 65506, 97)},
		{576, span(1, 3000, 13)},
	} {
		want := map[string][]theory.Ceiling{}
		wantCells := map[string][]string{}
		etherMTU := min(tc.mtu, 1500)
		rates := []string{"10M", "100M", "1G", "10G"}
		for _, r := range rates {
			want[r] = etherFigures(t, r, etherMTU, tc.sizes)
		}
		for _, phy := range []string{"atm25", "ds3", "e3", "oc12", "oc3"} {
			for _, aal := range []string{"aal5", "aal34"} {
				for _, encap := range []string{"llc", "vcmux"} {
					k := phy + "/" + aal + "/" + encap
					want[k], wantCells[k] = calcFigures(t, phy, aal, encap, tc.mtu, tc.sizes)
				}
			}
		}
		for i, n := range tc.sizes {
			// The detail's path follows the sizes round, so every path's
			// detail is compared too.
			k := [...]string{"oc3/aal5/llc", "atm25/aal34/vcmux", "ds3/aal34/llc", "e3/aal5/vcmux", "oc12/aal5/llc"}[i%5]
			p := strings.Split(k, "/")
			target := fmt.Sprintf("/figures?size=%d&mtu=%d&window=0&phy=%s&aal=%s&encap=%s&ethmtu=%d", n, tc.mtu, p[0], p[1], p[2], etherMTU)
			var paths explorer.Figures
			var err error
			if i%10 == 0 {
				// Through the handler and its JSON, as the page reads it.
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest("GET", target, nil))
				if err := json.Unmarshal(w.Body.Bytes(), &paths); err != nil || w.Code != 200 {
					t.Fatalf("size %d: %d %v %.200s", n, w.Code, err, w.Body.String())
				}
			} else {
				// The same figures as Go values: JSON carries a float64 exactly.
				q, _ := explorer.ParseQuery(httptest.NewRequest("GET", target, nil).URL.Query().Get)
				if paths, err = explorer.Compute(q, ""); err != nil {
					t.Fatalf("size %d: %v", n, err)
				}
			}
			if len(paths.Rows) != 20 {
				t.Fatalf("size %d: %d rows", n, len(paths.Rows))
			}
			for _, row := range paths.Rows {
				k := row.PHY + "/" + row.AAL + "/" + row.Encap
				if row.Ceiling != want[k][i] || theory.FormatCount(row.Cells) != wantCells[k][i] {
					t.Fatalf("MTU %d, %s at %d bytes: explorer %+v, %v cells; calc %+v, %s cells", tc.mtu, k, n, row.Ceiling, row.Cells, want[k][i], wantCells[k][i])
				}
			}
			if len(paths.Ethernet) != len(rates) {
				t.Fatalf("size %d: %d Ethernet rows", n, len(paths.Ethernet))
			}
			for j, row := range paths.Ethernet {
				if row.Ceiling != want[rates[j]][i] {
					t.Fatalf("MTU %d, Ethernet %s at %d bytes: explorer %+v; calc %+v", etherMTU, rates[j], n, row.Ceiling, want[rates[j]][i])
				}
			}
			d := paths.Detail
			if d.Ceiling != want[k][i] || theory.FormatCount(d.Cells) != wantCells[k][i] || len(d.Line) != 1 || d.Line[0].Goodput != want[k][i].Goodput {
				t.Fatalf("MTU %d, detail %s at %d bytes: %+v, %v cells; calc %+v", tc.mtu, k, n, d.Row, d.Cells, want[k][i])
			}
		}
	}
}

func span(from, to, step int) []int {
	var s []int
	for n := from; n <= to; n += step {
		s = append(s, n)
	}
	return s
}

// startWeb runs `atmlab calc --web 127.0.0.1:0` in-process and returns the
// URL it prints; the server stops when the test ends.
func startWeb(t *testing.T, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		root := newRoot()
		root.SetOut(pw)
		root.SetErr(io.Discard)
		root.SetArgs(append([]string{"calc", "--web", "127.0.0.1:0"}, extra...))
		err := root.ExecuteContext(ctx)
		pw.Close()
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("calc --web: %v", err)
		}
	})
	line, err := bufio.NewReader(pr).ReadString('\n')
	go io.Copy(io.Discard, pr)
	i := strings.Index(line, "http://")
	if err != nil || i < 0 {
		t.Fatalf("calc --web printed %q: %v", line, err)
	}
	return strings.Fields(line[i:])[0]
}

// TestCalcWeb runs `atmlab calc --web` and fetches the page and a figure;
// a foreign Host is refused; --results needs --web and a results folder.
func TestCalcWeb(t *testing.T) {
	url := startWeb(t)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/") {
		t.Fatalf("url %q", url)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "Sawtooth explorer") {
		t.Fatalf("page: %d %.200s", resp.StatusCode, page)
	}
	resp, err = http.Get(url + "figures?size=1445&phy=oc3")
	if err != nil {
		t.Fatal(err)
	}
	var f explorer.Figures
	json.NewDecoder(resp.Body).Decode(&f)
	resp.Body.Close()
	if f.Detail.Cells != 32 || int(f.Detail.Ceiling.Goodput/1e3) != 127596 {
		t.Fatalf("figures at 1445: %+v", f.Detail.Row)
	}
	req, _ := http.NewRequest("GET", url, nil)
	req.Host = "rebind.example" + url[strings.LastIndex(url, ":"):len(url)-1]
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign host: %d", resp.StatusCode)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"calc", "--results", "x", "100"}, "--results goes with --web"},
		{[]string{"calc", "--results", "my $(x).jsonl", "100"}, "--results goes with --web: atmlab calc --web 127.0.0.1:8080 --results 'my $(x).jsonl'"},
		{[]string{"calc", "--web", "127.0.0.1:0", "--results", t.TempDir()}, "no results.jsonl there"},
		{[]string{"calc", "--web", "8080"}, "give host:port"},
		{[]string{"calc", "--web", ":0"}, "--web-public"},
		{[]string{"calc", "--web", "0.0.0.0:0"}, "--web-public"},
		{[]string{"calc", "--web-public", "100"}, "--web-public goes with --web"},
		{[]string{"calc", "--web", "127.0.0.1:0", "100"}, "unknown command"},
	} {
		_, _, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestCalcWebPublic: with --web-public the explorer binds every interface
// and answers the machine's own addresses, still not a foreign name.
func TestCalcWebPublic(t *testing.T) {
	url := startWeb(t, "--web", "0.0.0.0:0", "--web-public")
	port := url[strings.LastIndex(url, ":")+1 : len(url)-1]
	if !strings.HasPrefix(url, "http://0.0.0.0:") && !strings.HasPrefix(url, "http://[::]:") {
		t.Fatalf("url %q: want every interface", url)
	}
	for host, want := range map[string]int{"127.0.0.1:" + port: 200, "localhost:" + port: 200, "rebind.example:" + port: 403} {
		req, _ := http.NewRequest("GET", "http://127.0.0.1:"+port+"/", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %q: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// TestExplorerInChromium opens `atmlab calc --web`'s page in headless
// Chromium, moves the slider with the keyboard and picks a path by
// clicking its row, and reads the cell count and ceiling off the page:
// they are calc's.
func TestExplorerInChromium(t *testing.T) {
	url := startWeb(t)
	ctx := headless.New(t)
	step := func(actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(c, actions...); err != nil {
			t.Fatal(err)
		}
	}
	read := func(size int, path string) (float64, float64) {
		t.Helper()
		step(chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`body[data-size="%d"][data-path="%s"]`, size, strings.ReplaceAll(path, " ", "/")))))
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		got, err := chromedp.Run(c, chromedp.Text(chromedp.ID("d-path")))
		if err != nil || got != path {
			t.Fatalf("page shows %q (%v), want %q", got, err, path)
		}
		cells, err := chromedp.Run(c, chromedp.Evaluate[string](`document.getElementById("d-cells").dataset.value`))
		if err != nil {
			t.Fatal(err)
		}
		goodput, err := chromedp.Run(c, chromedp.Evaluate[string](`document.getElementById("d-ceiling").dataset.value`))
		if err != nil {
			t.Fatal(err)
		}
		n, err1 := strconv.ParseFloat(cells, 64)
		g, err2 := strconv.ParseFloat(goodput, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("page's figures %q %q", cells, goodput)
		}
		return n, g
	}
	check := func(size int, phy, aal, encap string) {
		t.Helper()
		n, g := read(size, phy+" "+aal+" "+encap)
		want, cells := calcFigures(t, phy, aal, encap, 9180, []int{size})
		if theory.FormatCount(n) != cells[0] || g != want[0].Goodput {
			t.Fatalf("%s %s %s at %d: page %v cells, %v bit/s; calc %s cells, %v bit/s", phy, aal, encap, size, n, g, cells[0], want[0].Goodput)
		}
	}
	step(chromedp.Navigate(url))
	check(1472, "oc3", "aal5", "llc")
	// The Ethernet table beside it: 1G at 1472 bytes is calc's 957.087 Mbit/s.
	ether := func(size int) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		g, err := chromedp.Run(c, chromedp.Evaluate[string](`document.querySelector('#ether tr[data-rate="1000000000"]').dataset.goodput`))
		shown, err2 := chromedp.Run(c, chromedp.Text(chromedp.CSS(`#ether tr[data-rate="1000000000"] td:last-child`)))
		want := etherFigures(t, "1G", 1500, []int{size})[0].Goodput
		if got, _ := strconv.ParseFloat(g, 64); err != nil || err2 != nil || got != want || shown != fmt.Sprintf("%.3f", want/1e6) {
			t.Fatalf("Ethernet 1G at %d: page %q (%q shown), %v %v; calc %v", size, g, shown, err, err2, want)
		}
	}
	ether(1472)
	// Three steps right: 1475 bytes, one over a tooth's edge (1444 + 31).
	step(chromedp.Focus(chromedp.ID("size")), chromedp.SendKeys(chromedp.ID("size"), kb.ArrowRight+kb.ArrowRight+kb.ArrowRight))
	check(1475, "oc3", "aal5", "llc")
	ether(1475) // two frames at MTU 1500
	step(chromedp.Focus(chromedp.ID("size")), chromedp.SendKeys(chromedp.ID("size"), kb.Home))
	check(1, "oc3", "aal5", "llc")
	step(chromedp.Click(chromedp.CSS(`#rows tr[data-key="atm25/aal34/vcmux"]`)))
	check(1, "atm25", "aal34", "vcmux")
	step(chromedp.Focus(chromedp.ID("size")), chromedp.SendKeys(chromedp.ID("size"), kb.End))
	check(9180, "atm25", "aal34", "vcmux")
	// The page drew the PDU: 9180 bytes at MTU 9180 are two fragments.
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rects, err := chromedp.Run(c, chromedp.Evaluate[int](`document.querySelectorAll("#layout rect").length`))
	if err != nil || rects < 100 {
		t.Fatalf("layout drew %d boxes: %v", rects, err)
	}
}

// encapLab is an OC-3c path measured with LLC/SNAP and, as a variant,
// with VC-mux, on both sides of the cell boundaries near 1445 bytes.
var encapLab = labtest.Lab("two-hosts-atm", "encap", `experiments:
  - name: encaps
    from: h1
    to: h2
    tests: [UDP_STREAM]
    sizes: [1300, 1348, 1349, 1396, 1397, 1420, 1444, 1445, 1452, 1453, 1492, 1493]
    duration: 500ms
    variants: [base, vcmux]
variants:
  - name: vcmux
    set:
      - {link: "h1:eth0", encap: vcmux}
`)

// TestExplorerDrawsEachVariantOnItsCurve measures an LLC/SNAP path and its
// VC-mux variant in virtual time, opens the explorer on the results in
// headless Chromium, and reads the chart: a dashed curve for each
// variant, each measured point on its own curve (VC-mux's 3 % above
// LLC's line where LLC needs a cell more), a legend naming both, and
// round tick labels. With ATMLAB_SCREENSHOT=../../docs/explorer.png it
// takes the docs' picture.
func TestExplorerDrawsEachVariantOnItsCurve(t *testing.T) {
	file := filepath.Join(t.TempDir(), "encap.yaml")
	os.WriteFile(file, []byte(encapLab), 0o644)
	out := filepath.Join(t.TempDir(), "out")
	if _, errOut, err := run(t, "lab", "run", file, "--clock", "virtual", "--out", out); err != nil {
		t.Fatalf("lab run --clock virtual: %v\n%s", err, errOut)
	}
	url := startWeb(t, "--results", out)
	ctx, cancel := context.WithTimeout(headless.New(t), 2*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1200, 900), chromedp.Navigate(url+"?size=1445"),
		chromedp.WaitVisible(chromedp.CSS(`body[data-size="1445"]`))); err != nil {
		t.Fatal(err)
	}
	type pt struct {
		Curve string  `json:"curve"`
		Y     float64 `json:"y"`
		OnY   float64 `json:"on"` // its curve's y at its x
	}
	// each point's y beside its own curve's y at the same x (the curve is
	// one vertex a byte, so the vertex at its x)
	pts, err := chromedp.Run(ctx, chromedp.Evaluate[[]pt](`[...document.querySelectorAll('#saw circle.meas')].map(c => {
		const line = document.querySelector('#saw polyline.curve[data-curve="' + c.dataset.curve + '"]');
		const x = +c.getAttribute('cx');
		let best = null;
		for (const p of (line ? line.getAttribute('points') : '').split(' ')) {
			const [px, py] = p.split(',').map(Number);
			if (best === null || Math.abs(px - x) < Math.abs(best[0] - x)) best = [px, py];
		}
		return {curve: c.dataset.curve, y: +c.getAttribute('cy'), on: best ? best[1] : -1};
	})`))
	if err != nil {
		t.Fatal(err)
	}
	curves, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#saw polyline.curve').length`))
	if curves != 2 || len(pts) != 24 {
		t.Fatalf("%d curves and %d measured points drawn, want 2 and 24", curves, len(pts))
	}
	seen := map[string]int{}
	for _, p := range pts {
		seen[p.Curve]++
		if math.Abs(p.Y-p.OnY) > 1.5 { // pixels: the virtual clock's figures are theory's
			t.Errorf("a point of curve %s at y %.1f, its curve at %.1f", p.Curve, p.Y, p.OnY)
		}
	}
	if seen["0"] != 12 || seen["1"] != 12 {
		t.Errorf("points by curve %v, want 12 on each", seen)
	}
	legend, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("saw-legend")))
	for _, want := range []string{"base", "LLC/SNAP", "vcmux", "VC-mux", "on its own ceiling", "chosen above"} {
		if !strings.Contains(legend, want) {
			t.Errorf("legend %q lacks %q", legend, want)
		}
	}
	ticks, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#saw text.ytick, #saw text.xtick')].map(e => e.textContent)`))
	if len(ticks) < 6 {
		t.Errorf("ticks %q", ticks)
	}
	for _, tk := range ticks {
		if v, err := strconv.ParseFloat(tk, 64); err != nil || v != math.Round(v) {
			t.Errorf("tick %q is not a round number", tk)
		}
	}
	if errs, _ := chromedp.Run(ctx, chromedp.Evaluate[any](`window.atmlabErrors || null`)); errs != nil {
		t.Errorf("script errors %v", errs)
	}
	// The docs' picture: ATMLAB_SCREENSHOT=../../docs/explorer.png.
	if shot := os.Getenv("ATMLAB_SCREENSHOT"); shot != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(shot, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
