// Package labyaml reads YAML files with positions: every problem is an
// *Error at its file, line and key, and a decoder collects them all so that
// a file's problems come back at once. The lab file and the lessons decode
// with it; what a key means is theirs.
package labyaml

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Error is one problem in a YAML file, printed as FILE:LINE: KEY: message.
type Error struct {
	File string
	Line int
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Key, e.Msg)
}

// JoinByLine joins problems, each an *Error, in line order.
func JoinByLine(errs []error) error {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].(*Error).Line < errs[j].(*Error).Line })
	return errors.Join(errs...)
}

// Decoder collects one file's problems, each at its line.
type Decoder struct {
	File string
	Errs []error
}

// Errorf records a problem at n's line (0 for nil) under key.
func (d *Decoder) Errorf(n *yaml.Node, key, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	d.Errs = append(d.Errs, &Error{File: d.File, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// Field is one allowed key of a mapping and what decodes its value.
type Field struct {
	Name     string
	Required bool
	Decode   func(key string, v *yaml.Node)
}

// Mapping decodes a YAML mapping, rejecting unknown and duplicate keys and
// reporting missing required ones.
func (d *Decoder) Mapping(n *yaml.Node, path string, fields []Field) {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	seen := map[string]bool{}
	d.keys(n, path, names, func(i int, key string, v *yaml.Node) {
		seen[names[i]] = true
		fields[i].Decode(key, v)
	})
	if n.Kind != yaml.MappingNode {
		return
	}
	for _, f := range fields {
		if f.Required && !seen[f.Name] {
			d.Errorf(n, Join(path, f.Name), "missing; this key is required")
		}
	}
}

// Keys checks that n is a mapping of allowed keys, each once, with the
// required ones present, and returns the values by key.
func (d *Decoder) Keys(n *yaml.Node, path string, allowed, required []string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	d.keys(n, path, allowed, func(i int, _ string, v *yaml.Node) { out[allowed[i]] = v })
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for _, r := range required {
		if out[r] == nil {
			d.Errorf(n, Join(path, r), "missing; this key is required")
		}
	}
	return out
}

// keys walks mapping n, refusing unknown and repeated keys, and hands on
// each allowed key's index in allowed, its path and its value.
func (d *Decoder) keys(n *yaml.Node, path string, allowed []string, each func(i int, key string, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, path, "want a mapping of keys, got %s", KindName(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := Join(path, k.Value)
		idx := slices.Index(allowed, k.Value)
		switch {
		case idx < 0:
			d.Errorf(k, key, "unknown key; allowed here: %s", strings.Join(allowed, ", "))
		case seen[k.Value]:
			d.Errorf(k, key, "given twice; keep one")
		default:
			seen[k.Value] = true
			each(idx, key, v)
		}
	}
}

// Join is the path of key under path: "topology.nodes".
func Join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// KindName says what a node is, for "got ..." in a message.
func KindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "nothing"
}

// HasKey reports whether mapping n has key.
func HasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// Scalar is a single value's text.
func (d *Decoder) Scalar(key string, v *yaml.Node) (string, bool) {
	if v.Kind != yaml.ScalarNode {
		d.Errorf(v, key, "want a single value, got %s", KindName(v))
		return "", false
	}
	return v.Value, true
}

// IntIn decodes a whole number from lo to hi.
func (d *Decoder) IntIn(key string, v *yaml.Node, lo, hi int, into *int) {
	s, ok := d.Scalar(key, v)
	if !ok {
		return
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		d.Errorf(v, key, "want a whole number from %d to %d, got %q", lo, hi, s)
		return
	}
	*into = n
}

// Boolean decodes true or false.
func (d *Decoder) Boolean(key string, v *yaml.Node, into *bool) {
	if s, ok := d.Scalar(key, v); ok {
		b, err := strconv.ParseBool(s)
		if err != nil {
			d.Errorf(v, key, "want true or false, got %q", s)
			return
		}
		*into = b
	}
}

// DurationIn decodes a Go duration from 0 to hi.
func (d *Decoder) DurationIn(key string, v *yaml.Node, hi time.Duration, into *time.Duration) {
	if s, ok := d.Scalar(key, v); ok {
		t, err := time.ParseDuration(s)
		if err != nil || t < 0 || t > hi {
			d.Errorf(v, key, "bad duration %q: from 0 to %v in Go syntax, such as 10ms, 100us, 1.5s", s, hi)
			return
		}
		*into = t
	}
}

// FloatIn parses a decimal number from lo to hi; NaN and infinities are
// outside every range.
func FloatIn(s string, lo, hi float64) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return f, err == nil && f >= lo && f <= hi
}

// Parsed decodes a value with parse (a settings row's parser, say); its
// error is the problem at the value's line.
func Parsed[T any](d *Decoder, key string, v *yaml.Node, parse func(string) (T, error), into *T) {
	if s, ok := d.Scalar(key, v); ok {
		x, err := parse(s)
		if err != nil {
			d.Errorf(v, key, "%v", err)
			return
		}
		*into = x
	}
}

// OneOf decodes a value that must be one of allowed.
func OneOf[T ~string](d *Decoder, key string, v *yaml.Node, into *T, allowed ...T) {
	if s, ok := d.Scalar(key, v); ok {
		if !slices.Contains(allowed, T(s)) {
			names := make([]string, len(allowed))
			for i, a := range allowed {
				names[i] = string(a)
			}
			d.Errorf(v, key, "%q: use one of %s", s, strings.Join(names, ", "))
			return
		}
		*into = T(s)
	}
}
