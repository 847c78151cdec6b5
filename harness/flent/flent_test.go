package flent

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/results"
)

func stream() labrun.Record {
	return labrun.Record{
		Point: labrun.Point{Variant: "llc", Experiment: "saw", Tool: "atmlab", Test: perf.TCPStream, Size: 1472, Rep: 1, From: "h1", To: "h2"},
		Result: perf.Result{Test: perf.TCPStream, Elapsed: 0.3, ThroughputBps: 90e6,
			Intervals: []perf.Interval{{Start: 0, End: 0.1, Bps: 80e6}, {Start: 0.1, End: 0.2, Bps: 95e6}, {Start: 0.2, End: 0.3, Bps: 95e6}}},
		Ceiling: 96e6,
		Clock:   "virtual",
		At:      "2026-12-05T01:00:00Z",
	}
}

// A stream's record becomes flent's tcp_1up file: its interval reports
// as the "TCP upload" series in Mbit/s at each interval's end, raw values
// at absolute times, and the metadata flent's plots read.
func TestConvertWritesFlentSeries(t *testing.T) {
	files, skipped := Convert([]labrun.Record{stream()})
	if skipped != 0 || len(files) != 1 {
		t.Fatalf("%d files, %d skipped", len(files), skipped)
	}
	got, err := json.Marshal(files[0].Set)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"metadata":{"NAME":"tcp_1up","TITLE":"llc saw: TCP_STREAM 1472 B #1 h1 to h2 (virtual time)",` +
		`"NOTE":"atmlab lab run, measured by atmlab; ceiling 96.000 Mbit/s",` +
		`"TIME":"2026-12-05T01:00:00.000000Z","T0":"2026-12-05T01:00:00.000000Z","STEP_SIZE":0.1,"LENGTH":0.3,"TOTAL_LENGTH":0.3,"DELAY":0,` +
		`"HOST":"h2","HOSTS":["h2"],"LOCAL_HOST":"h1","IP_VERSION":4,"DATA_FILENAME":"llc-saw-TCP_STREAM-1472-default-r1-virtual.flent.gz",` +
		`"TEST_PARAMETERS":{"clock":"virtual","experiment":"saw","repetition":"1","size":"1472","sockbuf":"0","test":"TCP_STREAM","tool":"atmlab","variant":"llc"},` +
		`"SERIES_META":{"TCP upload":{"UNITS":"Mbits/s","MEAN_VALUE":90}}},` +
		`"version":4,"x_values":[0.1,0.2,0.3],"results":{"TCP upload":[80,95,95]},` +
		`"raw_values":{"TCP upload":[{"t":1796432400.1,"val":80},{"t":1796432400.2,"val":95},{"t":1796432400.3,"val":95}]}}`
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if files[0].Name != "llc-saw-TCP_STREAM-1472-default-r1-virtual.flent.gz" {
		t.Errorf("name %q", files[0].Name)
	}
}

// A request/response record is flent's latency series: 1/(transactions a
// second) in ms, the test flent names its series after (UDP_RR: flent's
// ping; TCP_RR: a netperf TCP_RR series); an interval with no
// transaction is no value, not an infinite time.
func TestConvertRequestResponseAsLatency(t *testing.T) {
	r := stream()
	r.Test = perf.UDPRR
	r.Result = perf.Result{Elapsed: 0.2, TransactionsPerSec: 2000,
		Intervals: []perf.Interval{{Start: 0, End: 0.1, TransactionsPerSec: 4000}, {Start: 0.1, End: 0.2}}}
	tcp := r
	tcp.Test = perf.TCPRR
	files, _ := Convert([]labrun.Record{r, tcp})
	if len(files) != 2 {
		t.Fatalf("%d files", len(files))
	}
	s := files[0].Set
	ys := s.Results["Ping (ms) UDP"]
	if s.Metadata.Name != "ping" || len(ys) != 2 || ys[0] == nil || *ys[0] != 0.25 || ys[1] != nil {
		t.Fatalf("UDP_RR: %s %v", s.Metadata.Name, s.Results)
	}
	if m := s.Metadata.SeriesMeta["Ping (ms) UDP"]; m.Units != "ms" || m.MeanValue != 0.5 {
		t.Errorf("series meta %+v", m)
	}
	if len(s.RawValues["Ping (ms) UDP"]) != 1 {
		t.Errorf("raw values %v: an interval with no value has no raw sample", s.RawValues)
	}
	if s := files[1].Set; s.Metadata.Name != "sctp_vs_tcp" || s.Results["Ping (ms) TCP CS0"] == nil {
		t.Errorf("TCP_RR: %s %v", s.Metadata.Name, s.Results)
	}
}

// A record without interval reports is its mean, flat from 0 to its end,
// and its note says so.
func TestConvertWithoutIntervalsDrawsTheMean(t *testing.T) {
	r := stream()
	r.Result.Intervals = nil
	files, _ := Convert([]labrun.Record{r})
	s := files[0].Set
	ys := s.Results["TCP upload"]
	if !reflect.DeepEqual(s.XValues, []float64{0, 0.3}) || len(ys) != 2 || *ys[0] != 90 || *ys[1] != 90 || s.Metadata.StepSize != 0.3 {
		t.Fatalf("x %v y %v step %v", s.XValues, ys, s.Metadata.StepSize)
	}
	if !strings.Contains(s.Metadata.Note, "no interval reports") {
		t.Errorf("note %q", s.Metadata.Note)
	}
}

// Failed records, tests flent has no series for and records without a
// figure are counted, not written; two records whose names would clash
// get two files.
func TestConvertSkipsWhatFlentCannotPlot(t *testing.T) {
	failed := stream()
	failed.Result.Error = "message too long"
	skippedTool := stream()
	skippedTool.Error = "skipped: iperf3 runs only in real time"
	unknown := stream()
	unknown.Test = "PING"
	empty := stream()
	empty.Result = perf.Result{}
	a, b := stream(), stream()
	a.Variant, b.Variant = "x/y", "x_y"
	files, skipped := Convert([]labrun.Record{failed, skippedTool, unknown, empty, a, b})
	if skipped != 4 || len(files) != 2 {
		t.Fatalf("%d files, %d skipped; want 2 and 4", len(files), skipped)
	}
	if files[0].Name == files[1].Name || files[1].Name != "x_y-saw-TCP_STREAM-1472-default-r1-virtual-2.flent.gz" || files[1].Set.Metadata.DataFile != files[1].Name {
		t.Errorf("names %q %q", files[0].Name, files[1].Name)
	}
}

// Encode gives gzipped JSON that Decode (and gzip and JSON alone) read
// back to the same set, and the same bytes for the same set.
func TestEncodeRoundTrip(t *testing.T) {
	files, _ := Convert([]labrun.Record{stream()})
	data, err := Encode(files[0].Set)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Encode(files[0].Set)
	if !bytes.Equal(data, again) {
		t.Error("the same set gave different bytes")
	}
	back, err := Decode("x.flent.gz", data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, files[0].Set) {
		t.Errorf("round trip:\n%+v\n%+v", back, files[0].Set)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	js, _ := io.ReadAll(zr)
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil || m["version"] != float64(4) || m["x_values"] == nil || m["results"] == nil || m["metadata"] == nil {
		t.Errorf("not flent's JSON: %v %.200s", err, js)
	}
	if _, err := Decode("bad.flent.gz", []byte("not gzip")); err == nil || !strings.Contains(err.Error(), "bad.flent.gz") {
		t.Errorf("bad file: %v", err)
	}
}

// Write puts a folder's records in flent/ and removes the files of an
// earlier export that are not written again.
func TestWriteReplacesAnEarlierExport(t *testing.T) {
	dir := t.TempDir()
	rec, _ := json.Marshal(stream())
	os.WriteFile(filepath.Join(dir, labrun.RecordsFile), append(rec, '\n'), 0o644)
	os.MkdirAll(filepath.Join(dir, Dir), 0o755)
	os.WriteFile(filepath.Join(dir, Dir, "old-point.flent.gz"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, Dir, "notes.txt"), []byte("mine"), 0o644)
	f, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, skipped, err := Write(context.Background(), f)
	if err != nil || n != 1 || skipped != 0 {
		t.Fatalf("Write: %d, %d, %v", n, skipped, err)
	}
	names, _ := f.ListDir(Dir)
	if want := []string{"llc-saw-TCP_STREAM-1472-default-r1-virtual.flent.gz", "notes.txt"}; !reflect.DeepEqual(names, want) {
		t.Errorf("flent/ holds %v, want %v", names, want)
	}
	data, err := f.ReadFile(Dir+"/"+names[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := Decode(names[0], data); err != nil || s.Metadata.Name != "tcp_1up" {
		t.Errorf("written file: %v %+v", err, s.Metadata)
	}
}
