package web

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/atmlab/atmlab/internal/headless"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// run runs a browser action or fails the test.
func run[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The page draws every node and link of the lab, and its live rates.
func TestBrowserShowsLab(t *testing.T) {
	_, f, addr := serve(t)
	ctx, cancel := context.WithTimeout(headless.New(t), time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("http://"+addr+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-node="sw1"]`))); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, chromedp.Poll[bool](`Number(document.body.dataset.polls || 0) >= 3`, chromedp.WithPollingTimeout(10*time.Second)))
	nodes := run(t, ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-node]')].map(e => e.dataset.node)`))
	links := run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-link]').length`))
	ab := run(t, ctx, chromedp.AttributeValue(chromedp.CSS(`#link-0`), "data-ab"))
	slices.Sort(nodes)
	if !slices.Equal(nodes, []string{"h1", "h2", "sw1"}) || links != 2 {
		t.Errorf("page shows nodes %v and %d links, want h1 h2 sw1 and 2", nodes, links)
	}
	// The fake's ports send 1 MB a snapshot, a snapshot every 250 ms of its
	// uptime: 32 Mbit/s.
	if ab.Value != "32000000" {
		t.Errorf("link 0's rate on the page %q, want 32000000 (bit/s)", ab.Value)
	}
	if f.snapshots() < 3 {
		t.Errorf("%d snapshots", f.snapshots())
	}
}

// applyOnPage sets a change in the page's form and returns the answer's
// HTTP status and text.
func applyOnPage(t *testing.T, ctx context.Context, url, direction, settings string) (status, text string) {
	t.Helper()
	err := chromedp.Do(ctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS(`[data-node="h1"]`)),
		chromedp.Click(chromedp.CSS(`#link-0 .hit`)),
		chromedp.SetValue(chromedp.CSS(`#set-direction`), direction),
		chromedp.SendKeys(chromedp.CSS(`#set-settings`), settings),
		chromedp.Click(chromedp.CSS(`#set-apply`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	status = run(t, ctx, chromedp.Poll[string](`document.getElementById('set-result').dataset.status`, chromedp.WithPollingTimeout(10*time.Second)))
	text = run(t, ctx, chromedp.Text(chromedp.CSS(`#set-result`)))
	return status, text
}

// A change from the page without the token is refused; with it, it reaches
// the lab.
func TestBrowserSet(t *testing.T) {
	s, f, addr := serve(t)
	ctx, cancel := context.WithTimeout(headless.New(t), time.Minute)
	defer cancel()
	status, text := applyOnPage(t, ctx, "http://"+addr+"/", "h1:eth0", "delay=20ms")
	if status != "403" || !strings.Contains(text, "token") || len(f.changes) != 0 {
		t.Fatalf("without the token: %s %q, changes %q; want 403 and nothing changed", status, text, f.changes)
	}
	status, text = applyOnPage(t, ctx, strings.Replace("http://"+addr+"/?token="+s.Token, "127.0.0.1", "localhost", 1), "h1:eth0", "delay=20ms")
	if status != "200" || len(f.changes) != 1 || f.changes[0] != "h1:eth0 h1:eth0 delay=20ms" {
		t.Fatalf("with the token: %s %q, changes %q", status, text, f.changes)
	}
}

// Every node and link of the shipped labs with hubs, ATM switches and
// routers draws and opens its counters and chart without a script error.
func TestBrowserEveryKind(t *testing.T) {
	ctx, cancel := context.WithTimeout(headless.New(t), 2*time.Minute)
	defer cancel()
	for _, file := range []string{"../topologies/praktikum.yaml", "../topologies/gns3-mpls.yaml", "../topologies/cernet-atm.yaml"} {
		lab, err := labfile.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		s, f, addr := serve(t)
		f.spec = lab.View()
		s.SetSource(f)
		run(t, ctx, chromedp.Steps(chromedp.Navigate("http://"+addr+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-node]`))))
		run(t, ctx, chromedp.Poll[bool](`Number(document.body.dataset.polls || 0) >= 2`, chromedp.WithPollingTimeout(10*time.Second)))
		for _, n := range f.spec.Nodes {
			run(t, ctx, chromedp.Click(chromedp.CSS(`[data-node="`+n.Name+`"]`)))
			run(t, ctx, chromedp.Poll[bool](`document.querySelector('#detail h2').textContent.includes(`+strconv.Quote(" "+n.Name)+`) && document.querySelector('#detail polyline') !== null`, chromedp.WithPollingTimeout(5*time.Second)))
		}
		for i := range f.spec.Links {
			run(t, ctx, chromedp.Evaluate[any](`document.querySelector('#link-`+strconv.Itoa(i)+`').dispatchEvent(new MouseEvent('click', {bubbles: true}))`))
			run(t, ctx, chromedp.Poll[bool](`document.querySelector('#detail h2').textContent.startsWith('link ')`, chromedp.WithPollingTimeout(5*time.Second)))
		}
		if errs := run(t, ctx, chromedp.Evaluate[[]string](`window.atmlabErrors`)); len(errs) > 0 {
			t.Errorf("%s: script errors %q", file, errs)
		}
		nodes := run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-node]').length`))
		if nodes != len(f.spec.Nodes) {
			t.Errorf("%s: page shows %d nodes of %d", file, nodes, len(f.spec.Nodes))
		}
	}
}

// A node's own counters (the snapshot's nodes) show in its panel whatever
// its kind, so a kind the page has no panel for, a wire, still shows
// what it counts.
func TestBrowserNodeCounters(t *testing.T) {
	lab, err := labfile.Parse("w.yaml", []byte(`name: w
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    w1: {kind: wire}
  links:
    - {endpoints: ["h1:eth0", "w1:p1"], ethernet: {rate: 1G}}
    - {endpoints: ["h2:eth0", "w1:p2"], ethernet: {rate: 100M}}
`))
	if err != nil {
		t.Fatal(err)
	}
	s, f, addr := serve(t)
	f.spec = lab.View()
	f.nodes = map[string]any{"w1": map[string]any{"kind": "wire", "counters": map[string]any{"forwarded": 4321}}}
	s.SetSource(f)
	ctx, cancel := context.WithTimeout(headless.New(t), time.Minute)
	defer cancel()
	run(t, ctx, chromedp.Steps(chromedp.Navigate("http://"+addr+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-node="w1"]`)),
		chromedp.Click(chromedp.CSS(`[data-node="w1"]`))))
	row := run(t, ctx, chromedp.Poll[string](`[...document.querySelectorAll('#detail table.counters tr')].map(r => r.textContent).find(t => t.startsWith('forwarded')) || ''`,
		chromedp.WithPollingTimeout(10*time.Second)))
	if row != "forwarded4321" {
		t.Errorf("w1's panel row %q, want forwarded 4321", row)
	}
}

// A student can read the page alone: a legend says what the links'
// colours mean, each link's rates name their direction by its ends
// ("h1 → sw1 32.00 Mbit/s"), and the header says in plain words how late
// the emulator is and what the veth baseline is, in milliseconds where
// that reads better than thousands of microseconds.
func TestBrowserNamesDirectionsAndColours(t *testing.T) {
	_, _, addr := serve(t)
	ctx, cancel := context.WithTimeout(headless.New(t), time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("http://"+addr+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-node="sw1"]`))); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, chromedp.Poll[bool](`Number(document.body.dataset.polls || 0) >= 3`, chromedp.WithPollingTimeout(10*time.Second)))
	legend := run(t, ctx, chromedp.Text(chromedp.ID("link-legend")))
	swatches := run(t, ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#link-legend .sw')].map(e => getComputedStyle(e).backgroundColor)`))
	for _, want := range []string{"colour", "under 5 %", "5–50 %", "50–90 %", "over 90 %", "thicker"} {
		if !strings.Contains(legend, want) {
			t.Errorf("legend %q lacks %q", legend, want)
		}
	}
	// the swatches are the wires' colours: grey, blue, orange, red
	if want := []string{"rgb(153, 153, 153)", "rgb(0, 119, 204)", "rgb(238, 136, 0)", "rgb(204, 0, 0)"}; !slices.Equal(swatches, want) {
		t.Errorf("legend's swatches %q, want %q", swatches, want)
	}
	dirs := run(t, ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#live-0 tspan')].map(e => e.textContent)`))
	if len(dirs) != 2 || dirs[0] != "h1 → sw1 32.00 Mbit/s" || dirs[1] != "sw1 → h1 32.00 Mbit/s" {
		t.Errorf("link 0's rates %q, want each direction named by its ends", dirs)
	}
	// The fake's emulator: 2 µs typically, 9 µs at p99, a 30 µs veth ping.
	head := run(t, ctx, chromedp.Text(chromedp.ID("emu")))
	for _, want := range []string{"late by 2 µs typically", "up to 9 µs (99th percentile)", "plain veth pair", "no emulator: 30.0 µs"} {
		if !strings.Contains(head, want) {
			t.Errorf("header %q lacks %q", head, want)
		}
	}
	for _, jargon := range []string{"lateness", "p99", "baseline"} {
		if strings.Contains(head, jargon) {
			t.Errorf("header %q says %q", head, jargon)
		}
	}
	late := run(t, ctx, chromedp.Evaluate[[]string](`[late(15990800), late(230000), late(40000)]`))
	if !slices.Equal(late, []string{"16 ms", "0.2 ms", "40 µs"}) {
		t.Errorf("lateness read as %q, want 16 ms, 0.2 ms, 40 µs", late)
	}
}
