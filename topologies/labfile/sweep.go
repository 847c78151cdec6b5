package labfile

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labyaml"
)

// MaxGridPoints bounds a sweep: every point is a lab built and measured
// with all the lab's experiments.
const MaxGridPoints = 1000

// sweepKeys are the variant keys a sweep may step through.
var sweepKeys = []string{"rate", "delay", "jitter", "loss", "buffer", "phy", "aal", "encap", "kind", "mpls", "cost", "cpu"}

var paramNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,23}$`)

// valueTextRE is what a swept value may be as its points' names show it
// (rates, durations, percentages, kinds, cpu: and cost: pairs): the names
// name result files (virtual-NAME.json), so no '/', space or markup.
var valueTextRE = regexp.MustCompile(`^[A-Za-z0-9._%:;+µμ-]+$`)

// maxPointName bounds a grid point's name, so that a file named by it
// (virtual-NAME.json) stays within 255 bytes.
const maxPointName = 200

// sweep decodes sweep: [{link|node: TARGET or [TARGETS], KEY: [VALUES], name: NAME}]
// and appends the grid's points to lab.Variants, named by their values in
// parameter order, such as "rate=10M,delay=5ms". Every value is decoded
// as a variant's would be, so its errors name its own line.
func (d *decoder) sweep(n *yaml.Node, lab *topologies.Lab) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		d.Errorf(n, "sweep", "want a list of parameters such as [{link: \"h1:eth0\", rate: [10M, 100M]}, {node: sw1, kind: [switch, hub]}]")
		return
	}
	sw := &topologies.Sweep{Line: n.Line}
	var sets [][][]topologies.Override // per parameter, per value: the overrides of its targets
	for i, e := range n.Content {
		path := fmt.Sprintf("sweep[%d]", i)
		p := &topologies.Param{Line: e.Line}
		var target string // link or node
		var targets, values []*yaml.Node
		var fields []labyaml.Field
		for _, t := range []string{"link", "node"} {
			fields = append(fields, labyaml.Field{Name: t, Required: false, Decode: func(key string, v *yaml.Node) {
				target = t
				if v.Kind == yaml.SequenceNode {
					targets = v.Content
				} else {
					targets = []*yaml.Node{v}
				}
			}})
		}
		fields = append(fields, labyaml.Field{Name: "name", Required: false, Decode: func(key string, v *yaml.Node) {
			if s, ok := d.Scalar(key, v); ok {
				if !paramNameRE.MatchString(s) {
					d.Errorf(v, key, "%q: use 1-24 lowercase letters, digits and '_', starting with a letter", s)
				}
				p.Name = s
			}
		}})
		for _, k := range sweepKeys {
			fields = append(fields, labyaml.Field{Name: k, Required: false, Decode: func(key string, v *yaml.Node) {
				if p.Key != "" {
					d.Errorf(v, key, "one parameter per entry: %s is already swept here; give %s its own entry", p.Key, k)
					return
				}
				p.Key = k
				if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
					d.Errorf(v, key, "want a list of values such as [10M, 100M]")
					return
				}
				values = v.Content
			}})
		}
		d.Mapping(e, path, fields)
		if e.Kind != yaml.MappingNode {
			continue
		}
		if target == "" || len(targets) == 0 {
			d.Errorf(e, path, "name the link: (an endpoint, or a list of them) or node: the parameter sets")
			continue
		}
		if p.Key == "" {
			d.Errorf(e, path, "name a key to sweep: %s", strings.Join(sweepKeys, ", "))
			continue
		}
		if len(values) == 0 {
			continue // said above
		}
		p.Name = cmp.Or(p.Name, p.Key)
		if slices.ContainsFunc(sw.Params, func(o *topologies.Param) bool { return o.Name == p.Name }) {
			d.Errorf(e, path, "a second parameter named %s: give this one name: (such as %s_2)", p.Name, p.Name)
		}
		var perValue [][]topologies.Override
		for j, v := range values {
			text := valueText(v)
			if slices.Contains(p.Values, text) {
				d.Errorf(v, fmt.Sprintf("%s.%s[%d]", path, p.Key, j), "%q is swept twice; keep one", text)
			}
			if !valueTextRE.MatchString(text) {
				d.Errorf(v, fmt.Sprintf("%s.%s[%d]", path, p.Key, j), "%q: a value names the grid's points and their result files: write it without spaces, '/' or quotes, such as 10M, 5ms, 0.1%%", text)
			}
			p.Values = append(p.Values, text)
			var os []topologies.Override
			for _, t := range targets {
				m := &yaml.Node{Kind: yaml.MappingNode, Line: v.Line, Column: v.Column, Content: []*yaml.Node{
					{Kind: yaml.ScalarNode, Value: target, Line: t.Line}, t,
					{Kind: yaml.ScalarNode, Value: p.Key, Line: v.Line}, v,
				}}
				os = append(os, d.override(fmt.Sprintf("%s.%s[%d]", path, p.Key, j), m, lab))
			}
			perValue = append(perValue, os)
		}
		sw.Params = append(sw.Params, p)
		sets = append(sets, perValue)
	}
	points := 1
	for _, p := range sw.Params {
		points *= len(p.Values)
		if points > MaxGridPoints {
			break
		}
	}
	if points > MaxGridPoints {
		var dims []string
		for _, p := range sw.Params {
			dims = append(dims, fmt.Sprintf("%d %s", len(p.Values), p.Name))
		}
		d.Errorf(n, "sweep", "%s make more than %d points, a grid's most: sweep fewer values, or split the grid over lab files", strings.Join(dims, " × "), MaxGridPoints)
		return
	}
	if len(sw.Params) < len(n.Content) {
		return // an entry was wrong: said above
	}
	length := len(sw.Params) - 1 // the commas
	for _, p := range sw.Params {
		longest := 0
		for _, v := range p.Values {
			longest = max(longest, len(v))
		}
		length += len(p.Name) + 1 + longest
	}
	if length > maxPointName {
		d.Errorf(n, "sweep", "the grid's points would have names of up to %d bytes, and they name result files: at most %d; give the parameters shorter name:s, or sweep fewer of them", length, maxPointName)
		return
	}
	lab.Sweep = sw
	named := map[string]bool{}
	for _, v := range lab.Variants {
		named[v.Name] = true
	}
	// Every combination, the first parameter slowest, as nested loops in file order.
	idx := make([]int, len(sw.Params))
	for {
		va := &topologies.Variant{Line: n.Line}
		var name []string
		for k, p := range sw.Params {
			va.Grid = append(va.Grid, p.Values[idx[k]])
			va.Set = append(va.Set, sets[k][idx[k]]...)
			name = append(name, p.Name+"="+p.Values[idx[k]])
		}
		va.Name = strings.Join(name, ",")
		if named[va.Name] {
			d.Errorf(n, "sweep", "the grid's point %s is also a named variant: rename the variant", va.Name)
		}
		lab.Variants = append(lab.Variants, va)
		k := len(idx) - 1
		for ; k >= 0; k-- {
			if idx[k]++; idx[k] < len(sw.Params[k].Values) {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

// valueText is a swept value as a variant name shows it: a scalar as
// written, a mapping (cpu:, cost:) as key:value pairs joined by ';', an
// empty one as "none".
func valueText(v *yaml.Node) string {
	if v.Kind != yaml.MappingNode {
		return v.Value
	}
	var kv []string
	for i := 0; i+1 < len(v.Content); i += 2 {
		kv = append(kv, v.Content[i].Value+":"+valueText(v.Content[i+1]))
	}
	if len(kv) == 0 {
		return "none"
	}
	return strings.Join(kv, ";")
}
