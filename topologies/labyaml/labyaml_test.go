package labyaml

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func top(t *testing.T, src string) *yaml.Node {
	t.Helper()
	n, err := Document("f.yaml", []byte(src), "second")
	if err != nil || n == nil {
		t.Fatalf("Document(%q) = %v, %v", src, n, err)
	}
	return n
}

// A mapping's unknown, repeated and missing keys are each an error at
// their line, in the words the lab file's and the lessons' tests expect.
func TestMappingRefusesUnknownRepeatedAndMissingKeys(t *testing.T) {
	d := &Decoder{File: "f.yaml"}
	var got []string
	d.Mapping(top(t, "a: 1\nzz: 2\na: 3\n"), "top", []Field{
		{Name: "a", Decode: func(key string, v *yaml.Node) { got = append(got, key+"="+v.Value) }},
		{Name: "b", Required: true, Decode: func(string, *yaml.Node) {}},
	})
	want := []string{
		"f.yaml:2: top.zz: unknown key; allowed here: a, b",
		"f.yaml:3: top.a: given twice; keep one",
		"f.yaml:1: top.b: missing; this key is required",
	}
	if len(got) != 1 || got[0] != "top.a=1" {
		t.Errorf("decoded %v, want [top.a=1]", got)
	}
	if len(d.Errs) != len(want) {
		t.Fatalf("errors %v, want %v", d.Errs, want)
	}
	for i, w := range want {
		if d.Errs[i].Error() != w {
			t.Errorf("error %d = %q, want %q", i, d.Errs[i], w)
		}
	}
	d = &Decoder{File: "f.yaml"}
	keys := d.Keys(top(t, "x: [1]\n"), "", []string{"x", "y"}, []string{"y"})
	if keys["x"] == nil || len(d.Errs) != 1 || d.Errs[0].Error() != "f.yaml:1: y: missing; this key is required" {
		t.Errorf("Keys = %v, errors %v", keys, d.Errs)
	}
	d = &Decoder{File: "f.yaml"}
	d.Mapping(top(t, "- 1\n"), "list", nil)
	if len(d.Errs) != 1 || d.Errs[0].Error() != "f.yaml:1: list: want a mapping of keys, got a list" {
		t.Errorf("a list for a mapping: %v", d.Errs)
	}
}

// A file's YAML problems come back at their lines under the key yaml.
func TestDocumentErrorsAtTheirLines(t *testing.T) {
	for src, want := range map[string]string{
		"a: 1\n---\nb: 2\n": "f.yaml:3: yaml: one document only",
		"a: 1\nb: [\n":      "f.yaml:2: yaml: line 2: did not find expected node content",
		"a: 1\nb: \xff\n":   "f.yaml:2: yaml: byte 0xff at column 4 is not UTF-8: save the file as UTF-8",
	} {
		_, err := Document("f.yaml", []byte(src), "one document only")
		var e *Error
		if !errors.As(err, &e) || err.Error() != want {
			t.Errorf("Document(%q) = %v, want %q", src, err, want)
		}
	}
	if n, err := Document("f.yaml", nil, "x"); n != nil || err != nil {
		t.Errorf("an empty file: %v, %v; want nothing and no error", n, err)
	}
	errs := TagErrors("f.yaml", top(t, "a: !!binary aGk=\nb: [!!str x, !local y]\n"))
	if len(errs) != 2 || !strings.HasPrefix(errs[0].Error(), "f.yaml:") {
		t.Errorf("TagErrors = %v, want two", errs)
	}
}

// Whatever the bytes, Document returns a node, nothing, or an *Error;
// it never panics.
func FuzzDocument(f *testing.F) {
	f.Add([]byte("a: 1\n"))
	f.Add([]byte("a: [\n"))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("\xfe\xff\x00a"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := Document("f.yaml", data, "second")
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || n != nil {
				t.Fatalf("Document = %v, %v: want an *Error and no node", n, err)
			}
			return
		}
		if n != nil {
			d := &Decoder{File: "f.yaml"}
			d.Keys(n, "", []string{"a"}, nil)
			TagErrors("f.yaml", n)
		}
	})
}
