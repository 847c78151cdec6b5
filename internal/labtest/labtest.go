// Package labtest holds the lab files tests share, so that a test names the
// lab it starts from and writes only what it changes:
//
//	labtest.Lab("two-hosts-switch", "echo")                       // as it is, named echo
//	labtest.Lab("two-hosts", "s", `experiments: [...]`)            // with sections added
//	labtest.Set(labtest.Lab("two-hosts", "far"), "topology.links[0].impair", "{delay: 10ms}") // one value changed
//
// The labs are the files in testdata/ (each says what it holds in its first
// lines): two-hosts, two-hosts-atm, two-hosts-switch, two-hosts-atm-switch,
// three-hosts-switch, three-hosts-hub, mpls-two-routers and
// split-two-switches (a lab with parts:). A test whose lab
// is the point of the test (a decoder's error at a line, a shape no other
// test uses) keeps its lab inline. Only tests import this package.
package labtest

import (
	"bytes"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

//go:embed testdata/*.yaml
var files embed.FS

// nameLine is a lab file's top-level name key.
var nameLine = regexp.MustCompile(`(?m)^name: .*$`)

// Lab returns the shared lab testdata/BASE.yaml named name, with sections
// (top-level YAML blocks such as "experiments:", "variants:" or "sweep:")
// appended in order, each on lines of its own. It panics when there is no
// such lab: the base is the test's own text, as regexp.MustCompile's
// pattern is.
func Lab(base, name string, sections ...string) string {
	b, err := files.ReadFile("testdata/" + base + ".yaml")
	if err != nil {
		panic(fmt.Sprintf("labtest: no shared lab %q (the labs are internal/labtest/testdata/*.yaml)", base))
	}
	var sb strings.Builder
	sb.WriteString(nameLine.ReplaceAllLiteralString(string(b), "name: "+name))
	for _, s := range sections {
		s = strings.TrimLeft(s, "\n")
		sb.WriteString(s)
		if !strings.HasSuffix(s, "\n") {
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

// Set returns lab with the YAML value at each path replaced, or added
// where the last key is missing; pathValues are path, value pairs, as
// strings.NewReplacer takes them. A path is keys joined by dots, [i] after
// a key for a list's item: "topology.links[0].impair",
// "topology.nodes.sw1.buffer", "seed". The lab is encoded again (flow
// style, quoting and comments kept), so its line numbers may move: a test
// of error positions keeps its lab inline. Set panics on a path that does
// not fit the lab, a value that is not YAML or an odd count of arguments.
func Set(lab string, pathValues ...string) string {
	if len(pathValues)%2 != 0 {
		panic(fmt.Sprintf("labtest: Set(%q): path, value pairs, got an odd count", pathValues))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(lab), &doc); err != nil || len(doc.Content) != 1 {
		panic(fmt.Sprintf("labtest: Set(%q): the lab is not YAML: %v", pathValues, err))
	}
	for i := 0; i < len(pathValues); i += 2 {
		path, value := pathValues[i], pathValues[i+1]
		var val yaml.Node
		if err := yaml.Unmarshal([]byte(value), &val); err != nil || len(val.Content) != 1 {
			panic(fmt.Sprintf("labtest: Set(%q, %q): the value is not YAML: %v", path, value, err))
		}
		slot, err := find(doc.Content[0], path)
		if err != nil {
			panic(fmt.Sprintf("labtest: Set(%q): %v", path, err))
		}
		*slot = *val.Content[0]
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		panic(fmt.Sprintf("labtest: Set(%q): %v", pathValues, err))
	}
	return out.String()
}

// step is one key of a path, with the list index after it (-1 for none).
var step = regexp.MustCompile(`^([^.\[\]]+)(?:\[([0-9]+)\])?$`)

// find returns the node at path under n, adding the last key to its
// mapping when it is missing.
func find(n *yaml.Node, path string) (*yaml.Node, error) {
	parts := strings.Split(path, ".")
	for i, part := range parts {
		m := step.FindStringSubmatch(part)
		if m == nil {
			return nil, fmt.Errorf("%q is not a key or key[i]", part)
		}
		if n.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%q: not under a mapping", part)
		}
		var next *yaml.Node
		for j := 0; j+1 < len(n.Content); j += 2 {
			if n.Content[j].Value == m[1] {
				next = n.Content[j+1]
			}
		}
		if next == nil {
			if i < len(parts)-1 || m[2] != "" {
				return nil, fmt.Errorf("no key %q", m[1])
			}
			key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: m[1]}
			next = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
			n.Content = append(n.Content, key, next)
		}
		if m[2] != "" {
			k, _ := strconv.Atoi(m[2])
			if next.Kind != yaml.SequenceNode || k >= len(next.Content) {
				return nil, fmt.Errorf("%s has no item %d", m[1], k)
			}
			next = next.Content[k]
		}
		n = next
	}
	return n, nil
}

// File writes lab to a fresh file lab.yaml in t.TempDir() and returns its
// path.
func File(t testing.TB, lab string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lab.yaml")
	if err := os.WriteFile(path, []byte(lab), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
