// Package flent writes a results folder's records as flent's data files
// (.flent.gz: gzipped JSON of x_values, results, raw_values and metadata,
// flent's file format 4), so that flent's plots and GUI open atmlab runs.
//
// One file holds one record (a point of a variant, by one clock). flent
// plots a file by the test named in its metadata, from the test
// definitions it ships, so each record is written as the flent test whose
// series means the same thing:
//
//	TCP_STREAM   tcp_1up      "TCP upload"         Mbit/s
//	TCP_MAERTS   tcp_1down    "TCP download"       Mbit/s
//	UDP_STREAM   udp_flood    "UDP upload"         Mbit/s
//	UDP_RR       ping         "Ping (ms) UDP"      ms a transaction
//	TCP_RR/CRR   sctp_vs_tcp  "Ping (ms) TCP CS0"  ms a transaction
//
// The samples are the record's interval reports (an experiment's
// interval:), each at the end of its interval; a record without them is
// its mean over its duration, drawn flat from 0 to its end. A
// transaction's time is 1/(transactions a second), as flent's own
// netperf RR series. A failed record, or one of a test flent has no
// series for, is not written.
package flent

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/results"
)

// Dir is the folder of a results folder that holds the flent files.
const Dir = "flent"

// Suffix ends every flent data file's name (flent's SUFFIX).
const Suffix = ".flent.gz"

// FormatVersion is flent's data file format these files are in.
const FormatVersion = 4

// timeLayout is flent's UTC timestamp (util.parse_date).
const timeLayout = "2006-01-02T15:04:05.000000Z"

// Set is one flent data file: flent's ResultSet as serialised.
type Set struct {
	Metadata  Metadata              `json:"metadata"`
	Version   int                   `json:"version"`
	XValues   []float64             `json:"x_values"`
	Results   map[string][]*float64 `json:"results"` // nil: no value (flent's None)
	RawValues map[string][]Raw      `json:"raw_values"`
}

// Raw is one sample of a raw series: its absolute time (Unix seconds) and
// value.
type Raw struct {
	T   float64 `json:"t"`
	Val float64 `json:"val"`
}

// Metadata is what flent reads of a file's settings: the test (NAME)
// whose plots apply, the title its plots and GUI show, times, lengths
// and the hosts.
type Metadata struct {
	Name     string  `json:"NAME"`
	Title    string  `json:"TITLE"`
	Note     string  `json:"NOTE"`
	Time     string  `json:"TIME"`
	T0       string  `json:"T0"`
	StepSize float64 `json:"STEP_SIZE"`
	Length   float64 `json:"LENGTH"`
	Total    float64 `json:"TOTAL_LENGTH"`
	// Delay is 0: flent's plots cut the first and last DELAY seconds
	// (5 by default, for its own tests' staggered starts).
	Delay      int                   `json:"DELAY"`
	Host       string                `json:"HOST"`
	Hosts      []string              `json:"HOSTS"`
	LocalHost  string                `json:"LOCAL_HOST"`
	IPVersion  int                   `json:"IP_VERSION"`
	DataFile   string                `json:"DATA_FILENAME"`
	Params     map[string]string     `json:"TEST_PARAMETERS"`
	SeriesMeta map[string]SeriesMeta `json:"SERIES_META"`
}

// SeriesMeta is a series' units and the record's own figure in them.
type SeriesMeta struct {
	Units     string  `json:"UNITS"`
	MeanValue float64 `json:"MEAN_VALUE"`
}

// test is how a perf test is written for flent.
type test struct {
	name, series, units string
	rr                  bool
}

var tests = map[string]test{
	perf.TCPStream: {"tcp_1up", "TCP upload", "Mbits/s", false},
	perf.TCPMaerts: {"tcp_1down", "TCP download", "Mbits/s", false},
	perf.UDPStream: {"udp_flood", "UDP upload", "Mbits/s", false},
	perf.UDPRR:     {"ping", "Ping (ms) UDP", "ms", true},
	perf.TCPRR:     {"sctp_vs_tcp", "Ping (ms) TCP CS0", "ms", true},
	perf.TCPCRR:    {"sctp_vs_tcp", "Ping (ms) TCP CS0", "ms", true},
}

// File is a flent data file to write: its name in Dir and its set.
type File struct {
	Name string
	Set  Set
}

// Convert makes the flent files of records, in their order, with names
// unique among them; skipped counts the records not written (failed, or
// of a test flent has no series for, or with no figure).
func Convert(recs []labrun.Record) (files []File, skipped int) {
	used := map[string]bool{}
	for _, r := range recs {
		s, ok := convert(r)
		if !ok {
			skipped++
			continue
		}
		name := fileName(r)
		for i := 2; used[name]; i++ {
			name = strings.TrimSuffix(fileName(r), Suffix) + "-" + strconv.Itoa(i) + Suffix
		}
		used[name] = true
		s.Metadata.DataFile = name
		files = append(files, File{Name: name, Set: s})
	}
	return files, skipped
}

// convert makes one record's set; false if it has none.
func convert(r labrun.Record) (Set, bool) {
	t, ok := tests[r.Test]
	res := r.Result
	if !ok || r.Error != "" || res.Error != "" {
		return Set{}, false
	}
	value := func(bps, tps float64) *float64 {
		v := bps / 1e6
		if t.rr {
			if tps <= 0 {
				return nil
			}
			v = 1e3 / tps
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	mean := value(res.ThroughputBps, res.TransactionsPerSec)
	if mean == nil || *mean == 0 {
		return Set{}, false
	}
	var xs []float64
	var ys []*float64
	step := res.Elapsed
	for _, iv := range res.Intervals {
		xs = append(xs, iv.End)
		ys = append(ys, value(iv.Bps, iv.TransactionsPerSec))
	}
	if len(xs) > 0 {
		step = res.Intervals[0].End - res.Intervals[0].Start
	} else {
		xs, ys = []float64{0, res.Elapsed}, []*float64{mean, mean}
	}
	start, err := time.Parse(time.RFC3339, r.At)
	if err != nil {
		start = time.Unix(0, 0)
	}
	start = start.UTC()
	t0 := float64(start.UnixNano()) / 1e9
	var raw []Raw
	for i, y := range ys {
		if y != nil {
			raw = append(raw, Raw{T: t0 + xs[i], Val: *y})
		}
	}
	length := xs[len(xs)-1]
	return Set{
		Version:   FormatVersion,
		XValues:   xs,
		Results:   map[string][]*float64{t.series: ys},
		RawValues: map[string][]Raw{t.series: raw},
		Metadata: Metadata{
			Name:      t.name,
			Title:     title(r),
			Note:      note(r),
			Time:      start.Format(timeLayout),
			T0:        start.Format(timeLayout),
			StepSize:  step,
			Length:    length,
			Total:     length,
			Host:      r.To,
			Hosts:     []string{r.To},
			LocalHost: r.From,
			IPVersion: 4,
			Params: map[string]string{
				"variant":    cmp.Or(r.Variant, "base"),
				"experiment": r.Experiment,
				"tool":       r.Tool,
				"test":       r.Test,
				"size":       strconv.Itoa(r.Size),
				"sockbuf":    strconv.Itoa(r.SockBuf),
				"repetition": strconv.Itoa(r.Rep),
				"clock":      clockOf(r).String(),
			},
			SeriesMeta: map[string]SeriesMeta{t.series: {Units: t.units, MeanValue: *mean}},
		},
	}, true
}

// title names the point: flent shows it under each plot's heading and as
// the file's label in its GUI and in plots that combine files.
func title(r labrun.Record) string {
	s := fmt.Sprintf("%s %s: %s", cmp.Or(r.Variant, "base"), r.Experiment, r.Test)
	if r.Size > 0 {
		s += fmt.Sprintf(" %d B", r.Size)
	}
	if r.SockBuf > 0 {
		s += fmt.Sprintf(" sockbuf %d", r.SockBuf)
	}
	s += fmt.Sprintf(" #%d %s to %s", r.Rep, r.From, r.To)
	if r.Clock != "" {
		s += " (" + r.Clock + " time)"
	}
	return s
}

// note says where the file came from and what flent cannot show of it.
func note(r labrun.Record) string {
	s := "atmlab lab run, measured by " + cmp.Or(r.MeasuredBy, r.Tool, "atmlab")
	if len(r.Result.Intervals) == 0 {
		s += "; no interval reports: the point's mean over its duration"
	}
	if r.Ceiling > 0 {
		s += fmt.Sprintf("; ceiling %.3f Mbit/s", r.Ceiling/1e6)
	}
	if r.Flag != "" {
		s += "; flagged: " + r.Flag
	}
	return s
}

// fileName is a record's file name: its point and clock, in characters
// safe in any file system.
func fileName(r labrun.Record) string {
	size, buf := "default", "default"
	if r.Size > 0 {
		size = strconv.Itoa(r.Size)
	}
	if r.SockBuf > 0 {
		buf = strconv.Itoa(r.SockBuf)
	}
	parts := []string{cmp.Or(r.Variant, "base"), r.Experiment, r.Test, size, buf, "r" + strconv.Itoa(r.Rep)}
	if r.Clock != "" {
		parts = append(parts, r.Clock)
	}
	for i, p := range parts {
		parts[i] = strings.Map(func(c rune) rune {
			if c < 128 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_') {
				return c
			}
			return '_'
		}, strings.TrimLeft(p, "."))
	}
	return strings.Join(parts, "-") + Suffix
}

// Encode is a set as flent reads it: JSON, gzipped (a gzip header with no
// name and no time, so that the same set gives the same bytes).
func Encode(s Set) ([]byte, error) {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Decode reads a flent data file written by Encode; file names it in
// errors.
func Decode(file string, data []byte) (Set, error) {
	var s Set
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return s, fmt.Errorf("%s: %w", file, err)
	}
	js, err := io.ReadAll(io.LimitReader(zr, results.MaxFileBytes+1))
	if err != nil {
		return s, fmt.Errorf("%s: %w", file, err)
	}
	if len(js) > results.MaxFileBytes {
		return s, fmt.Errorf("%s: more than %d bytes of JSON", file, results.MaxFileBytes)
	}
	return s, results.DecodeJSON(file, js, &s)
}

// Write makes the results folder's flent files in Dir from its records,
// and removes the files of an earlier export that this one has not
// written again (a folder run again with --force); it returns how many it
// wrote and how many records it skipped.
func Write(ctx context.Context, f *results.Folder) (written, skipped int, err error) {
	recs, err := labrun.Records(ctx, f)
	if err != nil {
		return 0, 0, err
	}
	files, skipped := Convert(recs)
	keep := map[string]bool{}
	for _, fl := range files {
		if err := ctx.Err(); err != nil {
			return written, skipped, err
		}
		data, err := Encode(fl.Set)
		if err != nil {
			return written, skipped, fmt.Errorf("%s: %w", f.Join(Dir+"/"+fl.Name), err)
		}
		if err := f.WriteFile(Dir+"/"+fl.Name, data, 0o644); err != nil {
			return written, skipped, err
		}
		keep[fl.Name] = true
		written++
	}
	names, err := f.ListDir(Dir)
	if err != nil {
		return written, skipped, err
	}
	for _, n := range names {
		if strings.HasSuffix(n, Suffix) && !keep[n] {
			if err := f.Remove(Dir + "/" + n); err != nil {
				return written, skipped, err
			}
		}
	}
	return written, skipped, nil
}

// WriteSaying is Write, and a line on out saying how many files it wrote
// where (and how many records it left out), as lab run and report print it.
func WriteSaying(ctx context.Context, f *results.Folder, out io.Writer) error {
	n, skipped, err := Write(ctx, f)
	if err != nil {
		return fmt.Errorf("flent files: %w", err)
	}
	msg := fmt.Sprintf("flent: %d files in %s", n, f.Join(Dir))
	if skipped > 0 {
		msg += fmt.Sprintf(" (%d records without a figure flent plots left out)", skipped)
	}
	fmt.Fprintln(out, msg)
	return nil
}

// WriteFolder is WriteSaying on the results folder at path, the caller's
// own (results.Open).
func WriteFolder(ctx context.Context, path string, out io.Writer) error {
	f, err := results.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return WriteSaying(ctx, f, out)
}

// clockOf is the clock a record was measured by (results.jsonl leaves
// real time out).
func clockOf(r labrun.Record) clock.Clock {
	c, _ := clock.Parse(r.Clock) // the results folder's reader checked it
	return c
}
