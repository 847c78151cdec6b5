package labrun

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func recordLine(t testing.TB, r Record) string {
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func TestRecordsRefuseAPointTwice(t *testing.T) {
	dir := t.TempDir()
	a, b := Record{Point: pt("base", 512)}, Record{Point: pt("base", 1472)}
	virtual := a
	virtual.Clock = "virtual" // the same point by the other clock is another record
	os.WriteFile(filepath.Join(dir, RecordsFile), []byte(recordLine(t, a)+recordLine(t, b)+recordLine(t, virtual)+recordLine(t, a)), 0o644)
	_, err := ReadRecords(dir)
	want := filepath.Join(dir, RecordsFile) + ":4: base · e · TCP_STREAM · size 512 · sockbuf 0 · #1 again, first on line 1"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("ReadRecords() = %v, want %q", err, want)
	}
}

func TestRecordsLongLineNamesFileAndLine(t *testing.T) {
	dir := t.TempDir()
	line := recordLine(t, Record{Point: pt("base", 512)})
	long := `{"error":"` + strings.Repeat("x", 2<<20) + `"}` + "\n"
	os.WriteFile(filepath.Join(dir, RecordsFile), []byte(line+long), 0o644)
	_, err := ReadRecords(dir)
	if want := filepath.Join(dir, RecordsFile) + ":2: line longer than"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("ReadRecords() = %v, want %q...", err, want)
	}
	os.WriteFile(filepath.Join(dir, RecordsFile), []byte(line+"{\"size\": \"big\"}\n"), 0o644)
	if _, err := ReadRecords(dir); err == nil || !strings.HasPrefix(err.Error(), filepath.Join(dir, RecordsFile)+":2: json: cannot unmarshal") {
		t.Fatalf("ReadRecords() = %v", err)
	}
}

func TestIdentityRefusesImpossibleValues(t *testing.T) {
	for _, tc := range []struct{ json, want string }{
		{`{"clock": "virtual", "points": -1}`, "campaign.json: points -1: a campaign plans 0 or more points"},
		{`{"clock": "sideways", "points": 1}`, `campaign.json: clock "sideways"`},
		{`{"clock": "real", "points": 1, "shard": "5/4"}`, `campaign.json: shard: --shard "5/4"`},
		{`{"clock": "real", "points": 1, "missing": ["a", "b"]}`, "campaign.json: 2 points missing of 1 planned"},
		{"{\n\"clock\": 7}", "campaign.json:2: json: cannot unmarshal"},
	} {
		if _, err := parseIdentity("campaign.json", []byte(tc.json)); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("parseIdentity(%s) = %v, want %q", tc.json, err, tc.want)
		}
	}
}

// A shard folder whose campaign.json plans -1 points is not merged.
func TestMergeRefusesNegativePoints(t *testing.T) {
	root := t.TempDir()
	id := Identity{Lab: "m", SHA256: "aa", Version: "v1", Clock: "virtual", Shard: "1/2"}
	a := shardDir(t, root, "a", id, pt("delay=0s", 512))
	id.Shard = "2/2"
	b := shardDir(t, root, "b", id, pt("delay=0s", 1472))
	os.WriteFile(filepath.Join(b, IdentityFile), []byte(`{"lab": "m", "lab_sha256": "aa", "atmlab_version": "v1", "clock": "virtual", "shard": "2/2", "points": -1}`), 0o644)
	out := filepath.Join(root, "out")
	if _, err := Merge(t.Context(), out, []string{a, b}); err == nil || !strings.Contains(err.Error(), filepath.Join(b, IdentityFile)+": points -1") {
		t.Fatalf("Merge() = %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a refused merge made %s", out)
	}
}

// parseRecords never panics; what it returns has no point twice and each
// record came from a line within the cap.
func FuzzRecords(f *testing.F) {
	f.Add([]byte(recordLine(f, Record{Point: pt("base", 512)})))
	f.Add([]byte(recordLine(f, Record{Point: pt("base", 512)}) + recordLine(f, Record{Point: pt("base", 512)})))
	f.Add([]byte("{}\n\n{\"size\": 1}\n"))
	f.Add([]byte(`{"result": {"intervals": [{}]}, "release_lateness": {}, "host_kernel": {}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := parseRecords(context.Background(), "results.jsonl", bytes.NewReader(data))
		if err != nil && !strings.HasPrefix(err.Error(), "results.jsonl:") {
			t.Fatalf("error without file and line: %v", err)
		}
		seen := map[string]bool{}
		for _, r := range recs {
			k := DoneKey(r.Point, r.Clock)
			if seen[k] {
				t.Fatalf("point %q twice", k)
			}
			seen[k] = true
		}
	})
}

// parseIdentity never panics, and what it accepts a merge can use.
func FuzzIdentity(f *testing.F) {
	f.Add([]byte(`{"lab": "m", "lab_sha256": "aa", "atmlab_version": "v1", "clock": "virtual", "shard": "2/2", "points": 4, "missing": ["x"]}`))
	f.Add([]byte(`{"clock": "real", "points": -1}`))
	f.Add([]byte(`{"clock": "both", "shard": "0/0"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		id, err := parseIdentity("campaign.json", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "campaign.json") {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		if id.Points < 0 || len(id.Missing) > id.Points {
			t.Fatalf("accepted %+v", id)
		}
		if id.Shard != "" {
			if _, err := ParseShard(id.Shard); err != nil {
				t.Fatalf("accepted shard %q", id.Shard)
			}
		}
	})
}

// parseFigures (references.json) never panics and names its file.
func FuzzFigures(f *testing.F) {
	f.Add([]byte(`[{"experiment": "s", "test": "UDP_STREAM", "size": 1472, "value": 95.7e6, "as": "11.41 MiB/s", "source": "praktikum"}]`))
	f.Add([]byte(`[{"value": "x"}]`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := parseFigures("references.json", data); err != nil && !strings.HasPrefix(err.Error(), "references.json") {
			t.Fatalf("error without the file: %v", err)
		}
	})
}
