package validate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/internal/labtest"
)

// run checks a file and writes it in format, returning what went to out
// and to errOut and the error Write returned ("" for none).
func run(t *testing.T, path, format string) (out, errOut, err string) {
	t.Helper()
	var o, e strings.Builder
	if werr := File(path).Write(&o, &e, format); werr != nil {
		err = werr.Error()
	}
	return o.String(), e.String(), err
}

// noCut is validate's line for a link the lab may not be cut at: a
// delay of 0.
func noCut(link string, line int) string {
	return fmt.Sprintf("  link %s (line %d) may not be cut: its one-way delay is 0, and a cut needs one above 0 (the lookahead by which the parts run apart); give the link a cable: length or an impair: delay\n", link, line)
}

// A valid lab file is one summary line and where it may be cut; a loop of
// switches is valid with its warning at its line; a lab whose study names an unknown tool and a
// size its tool cannot send is every problem at its line, and an error
// that counts them; a lesson is checked as a lesson.
func TestValidateWritesEachFileAsATable(t *testing.T) {
	good := filepath.Join(t.TempDir(), "good.yaml")
	if err := os.WriteFile(good, []byte(labtest.Lab("two-hosts-switch", "good")), 0o644); err != nil {
		t.Fatal(err)
	}
	lesson := filepath.Join("..", "harness", "lesson", "testdata", "lesson.yaml")
	for _, tc := range []struct{ path, out, errOut, err string }{
		{good, good + ": lab good is valid: 3 nodes, 2 links\n" + noCut("h1:eth0-sw1:p1", 9) + noCut("h2:eth0-sw1:p2", 10), "", ""},
		{"testdata/loop.yaml", "testdata/loop.yaml: lab loop is valid: 4 nodes, 4 links (1 warning(s))\n" +
			noCut("h1:eth0-sw1:p1", 11) + noCut("h2:eth0-sw2:p1", 12) + noCut("sw1:p2-sw2:p2", 13) + noCut("sw1:p3-sw2:p3", 14),
			"testdata/loop.yaml:14: warning: topology.links: loop: links on lines 13 and 14 both join sw1 and sw2: one broadcast circles it forever (a storm), as between real switches without spanning tree; remove a link to break it\n", ""},
		{"testdata/bad.yaml", "",
			"testdata/bad.yaml:11: experiments[0].tool: \"netperf\": use atmlab, iperf, iperf3\n" +
				"testdata/bad.yaml:12: experiments[1].sizes: 8 bytes with UDP_STREAM: iperf3 sends UDP blocks of 16 to 65507 bytes and refuses others\n",
			"testdata/bad.yaml: 2 problem(s)"},
		{lesson, lesson + ": lesson sawtooth-test is valid: 7 questions on lab lessontest\n", "", ""},
	} {
		out, errOut, err := run(t, tc.path, "table")
		if out != tc.out || errOut != tc.errOut || err != tc.err {
			t.Errorf("validate %s:\nout    %q\nerrOut %q\nerr    %q\nwant\nout    %q\nerrOut %q\nerr    %q", tc.path, out, errOut, err, tc.out, tc.errOut, tc.err)
		}
	}
}

// cutJSON is validate -o json's entry for a link of delay 0.
func cutJSON(link string, line int) map[string]any {
	return map[string]any{"cuttable": false, "line": line, "link": link, "lookahead": "0s",
		"why": "its one-way delay is 0, and a cut needs one above 0 (the lookahead by which the parts run apart); give the link a cable: length or an impair: delay"}
}

// As JSON, a lab file is one object on out with its problems, warnings,
// parts and cuts, nothing on errOut; a lesson's has only its problems.
func TestValidateWritesEachFileAsJSON(t *testing.T) {
	lesson := filepath.Join("..", "harness", "lesson", "testdata", "lesson.yaml")
	for _, tc := range []struct {
		path string
		want map[string]any
		err  string
	}{
		{"testdata/loop.yaml", map[string]any{"file": "testdata/loop.yaml", "valid": true, "problems": nil, "parts": []any{},
			"cuts":     []any{cutJSON("h1:eth0-sw1:p1", 11), cutJSON("h2:eth0-sw2:p1", 12), cutJSON("sw1:p2-sw2:p2", 13), cutJSON("sw1:p3-sw2:p3", 14)},
			"warnings": []any{"testdata/loop.yaml:14: topology.links: loop: links on lines 13 and 14 both join sw1 and sw2: one broadcast circles it forever (a storm), as between real switches without spanning tree; remove a link to break it"}}, ""},
		{"testdata/bad.yaml", map[string]any{"file": "testdata/bad.yaml", "valid": false, "warnings": nil, "parts": []any{},
			"cuts": []any{cutJSON("h1:eth0-h2:eth0", 9)}, "problems": []any{
				"testdata/bad.yaml:11: experiments[0].tool: \"netperf\": use atmlab, iperf, iperf3",
				"testdata/bad.yaml:12: experiments[1].sizes: 8 bytes with UDP_STREAM: iperf3 sends UDP blocks of 16 to 65507 bytes and refuses others"}},
			"testdata/bad.yaml: 2 problem(s)"},
		{lesson, map[string]any{"file": lesson, "valid": true, "problems": nil}, ""},
	} {
		out, errOut, err := run(t, tc.path, "json")
		var got map[string]any
		if jerr := json.Unmarshal([]byte(out), &got); jerr != nil {
			t.Fatalf("validate -o json %s: %v: %s", tc.path, jerr, out)
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(tc.want)
		if string(gb) != string(wb) || errOut != "" || err != tc.err {
			t.Errorf("validate -o json %s:\n%s\nerrOut %q, err %q\nwant\n%s\nerr %q", tc.path, gb, errOut, err, wb, tc.err)
		}
	}
}
