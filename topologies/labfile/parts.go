package labfile

import (
	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/split"
)

// parts decodes parts: (a mapping of part names to lists of node names)
// into lab.Parts: every node in exactly one part, and every link between
// two parts one that may be cut (split.Check). It runs once nodes and
// links are valid.
func (d *decoder) parts(n *yaml.Node, lab *topologies.Lab) {
	if n.Kind != yaml.MappingNode || len(n.Content) < 4 {
		d.Errorf(n, "parts", "want a mapping of two or more part names to lists of nodes, such as {left: [h1, sw1], right: [h2, sw2]}")
		return
	}
	in := map[string]*yaml.Node{} // node -> where a part lists it
	of := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := "parts." + k.Value
		if !nameRE.MatchString(k.Value) || len(k.Value) > 24 {
			d.Errorf(k, key, "bad part name: use 1-24 lowercase letters, digits and '_', starting with a letter or digit")
		}
		if _, dup := d.partNamed(lab, k.Value); dup {
			d.Errorf(k, key, "part defined twice; rename one")
			continue
		}
		part := &topologies.Part{Name: k.Value, Line: k.Line}
		lab.Parts = append(lab.Parts, part)
		if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
			d.Errorf(v, key, "want a list of one or more node names, such as [h1, sw1]")
			continue
		}
		for _, e := range v.Content {
			name, ok := d.Scalar(key, e)
			switch {
			case !ok:
			case lab.Node(name) == nil:
				d.Errorf(e, key, "no node named %q in topology.nodes", name)
			case in[name] != nil:
				d.Errorf(e, key, "node %s is already in part %s (line %d); a node is in one part", name, of[name], in[name].Line)
			default:
				in[name], of[name] = e, part.Name
				part.Nodes = append(part.Nodes, name)
			}
		}
	}
	for _, node := range lab.Nodes {
		if in[node.Name] == nil {
			d.Errorf(n, "parts", "node %s (line %d) is in no part; list it under one", node.Name, node.Line)
		}
	}
	if len(d.Errs) == 0 {
		d.Errs = append(d.Errs, split.Check(lab)...)
	}
}

// partNamed returns the lab's part named name, if it has one yet.
func (d *decoder) partNamed(lab *topologies.Lab, name string) (*topologies.Part, bool) {
	for _, p := range lab.Parts {
		if p.Name == name {
			return p, true
		}
	}
	return nil, false
}
