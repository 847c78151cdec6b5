package labyaml

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// coreTags are the explicit tags a lab file may write: the YAML core
// schema's, which only say what the plain value says already. The decoder
// reads every value as its text, so any other tag (!!python/object,
// !!binary, !!timestamp, a local !tag) would be ignored and its value read
// as something the author did not mean.
var coreTags = []string{"!!str", "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq"}

// foreignTag reports whether n or a node under it has an explicit tag
// outside coreTags; it builds no key paths, which only an error needs.
func foreignTag(n *yaml.Node) bool {
	stack := []*yaml.Node{n}
	for len(stack) > 0 {
		n, stack = stack[len(stack)-1], stack[:len(stack)-1]
		if n.Style&yaml.TaggedStyle != 0 && !slices.Contains(coreTags, n.ShortTag()) {
			return true
		}
		stack = append(stack, n.Content...)
	}
	return false
}

// TagErrors refuses every explicit tag outside coreTags in the tree under
// top, each at its line with the key it sits under.
func TagErrors(file string, top *yaml.Node) []error {
	if !foreignTag(top) {
		return nil
	}
	type item struct {
		n    *yaml.Node
		path string
	}
	var errs []error
	stack := []item{{top, ""}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := it.n
		if n.Style&yaml.TaggedStyle != 0 && !slices.Contains(coreTags, n.ShortTag()) {
			key := it.path
			if key == "" {
				key = "yaml"
			}
			errs = append(errs, &Error{File: file, Line: n.Line, Key: key,
				Msg: fmt.Sprintf("tag %s: a lab file holds plain values and would ignore it; remove the tag (only YAML's core tags %s are accepted)", n.Tag, strings.Join(coreTags, ", "))})
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := Join(it.path, n.Content[i].Value)
				stack = append(stack, item{n.Content[i], k}, item{n.Content[i+1], k})
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				stack = append(stack, item{c, fmt.Sprintf("%s[%d]", it.path, i)})
			}
		}
	}
	return errs
}
