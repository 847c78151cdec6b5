package topologies

import (
	"reflect"
	"slices"

	"github.com/atmlab/atmlab/topologies/study"
)

// Clone returns a copy of the lab that shares nothing a variant or a
// caller changes (lab run's --quick shrinks a variant's experiments), so
// that every variant is made from one resolved lab as written. Its
// variants, sweep and Source, which no variant changes, are shared: copying them
// for each variant would make memory grow with their square. Nodes, links
// and experiments, the bulk of a big lab, are copied field by field (a
// reflective copy took half as long as resolving the lab again); the
// study parts by deepCopy. TestVariantLabsShareNothing checks that no
// field is missed.
func (l *Lab) Clone() *Lab {
	c := *l
	c.nodeIndex, c.linkIndex, c.nodesIndexed, c.linksIdx = nil, nil, 0, 0 // they point into l
	c.Nodes, c.Links, c.Experiments, c.Variants, c.Sweep, c.Source = nil, nil, nil, nil, nil, nil
	out := deepCopy(reflect.ValueOf(&c), map[ptrKey]reflect.Value{}).Interface().(*Lab)
	out.Nodes = cloneAll(l.Nodes, (*Node).clone)
	out.Links = cloneAll(l.Links, (*Link).clone)
	out.Experiments = cloneAll(l.Experiments, (*study.Experiment).Clone)
	out.Variants, out.Sweep, out.Source = l.Variants, l.Sweep, l.Source
	return out
}

func cloneAll[T any](s []*T, clone func(*T) *T) []*T {
	if s == nil {
		return nil
	}
	out := make([]*T, len(s))
	for i, x := range s {
		out[i] = clone(x)
	}
	return out
}

// clonePtr returns a copy of *p, or nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

func (n *Node) clone() *Node {
	c := *n
	c.Interfaces = cloneAll(n.Interfaces, func(i *Interface) *Interface {
		ci := *i
		ci.VCs = slices.Clone(i.VCs)
		return &ci
	})
	c.Routes, c.Sysctls = slices.Clone(n.Routes), slices.Clone(n.Sysctls)
	if a := clonePtr(n.ATMSwitch); a != nil {
		a.Mappings, a.Cross = slices.Clone(a.Mappings), slices.Clone(a.Cross)
		c.ATMSwitch = a
	}
	c.Router, c.CPU = clonePtr(n.Router), clonePtr(n.CPU)
	return &c
}

func (l *Link) clone() *Link {
	c := *l
	c.ATM = clonePtr(l.ATM)
	return &c
}

type ptrKey struct {
	t reflect.Type
	p uintptr
}

// deepCopy copies v: pointers, slices and maps are followed and copied (a
// pointer met twice is copied once, so a finding's reference stays one of
// the lab's references); a struct's unexported fields are copied as they
// are (a reference's file).
func deepCopy(v reflect.Value, seen map[ptrKey]reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		k := ptrKey{v.Type(), v.Pointer()}
		if c, ok := seen[k]; ok {
			return c
		}
		c := reflect.New(v.Type().Elem())
		seen[k] = c
		c.Elem().Set(deepCopy(v.Elem(), seen))
		return c
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			c.Index(i).Set(deepCopy(v.Index(i), seen))
		}
		return c
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			c.SetMapIndex(it.Key(), deepCopy(it.Value(), seen))
		}
		return c
	case reflect.Struct:
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && holdsRefs(v.Field(i).Kind()) {
				c.Field(i).Set(deepCopy(v.Field(i), seen))
			}
		}
		return c
	case reflect.Array:
		c := reflect.New(v.Type()).Elem()
		for i := range v.Len() {
			c.Index(i).Set(deepCopy(v.Index(i), seen))
		}
		return c
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type()).Elem()
		c.Set(deepCopy(v.Elem(), seen))
		return c
	}
	return v
}

// holdsRefs reports whether a value of kind k may lead to memory deepCopy
// must copy.
func holdsRefs(k reflect.Kind) bool {
	switch k {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Struct, reflect.Array, reflect.Interface:
		return true
	}
	return false
}
