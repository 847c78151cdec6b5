// Package kinds is the one table of node kinds (Table), in the order
// errors list them: per kind, the keys a lab file's node of it takes
// besides kind (and the decoders of those only it takes), the links its
// ports take, the configuration a node starts with, its defaults and what
// only its nodes must satisfy, each kind's row in a file of its own. The lab file's reader (labfile), the planning
// (plan) and the builder of the models (devices, which gives each row its
// unit) all read this one table.
package kinds

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labyaml"
)

// Table is the node kinds, one row each. A new kind is a file here with
// its row, a line in this table, and its unit in devices.
var Table = []Row{hostRow, switchRow, hubRow, atmSwitchRow, routerRow, wireRow}

// Row is one kind's row of the table.
type Row struct {
	Kind     topologies.Kind
	Keys     []string               // accepted besides kind
	Media    Media                  // the links its ports take
	Start    func(*topologies.Node) // makes the kind's configuration before its keys are decoded; nil for none
	Defaults func(*topologies.Node) // fills what the file left out; nil for nothing
	// Decode gives the decoders of the keys only this kind takes, into n
	// (after Start); the lab file's reader decodes the shared keys. nil
	// for none.
	Decode func(d *labyaml.Decoder, n *topologies.Node) []labyaml.Field
	// Check validates a node of the kind against the lab's links, once
	// every link is read; nil for nothing beyond the shared checks.
	Check func(d *labyaml.Decoder, lab *topologies.Lab, n *topologies.Node)
}

// PortName is an interface's or a port's name: up to 15 letters, digits,
// '_' and '.', starting with a letter (a Linux interface name).
var PortName = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_.]{0,14}$`)

// MaxCost is the most a CPU or a router may spend on a packet.
const MaxCost = time.Second

// Media are the links a kind's ports take.
type Media uint8

// The media a kind's ports take.
const (
	EthernetOnly   Media = iota // the zero value: most kinds
	EthernetAndATM              // a host or a router: an Ethernet NIC or an ATM adapter (Classical IP) per interface
	ATMOnly
)

// Of returns k's row.
func Of(k topologies.Kind) (Row, bool) {
	i := slices.IndexFunc(Table, func(r Row) bool { return r.Kind == k })
	if i < 0 {
		return Row{}, false
	}
	return Table[i], true
}

// HasInterfaces reports whether nodes of the kind have named interfaces
// (addresses, MTUs, routes) rather than bare ports.
func (r Row) HasInterfaces() bool { return slices.Contains(r.Keys, "interfaces") }

// List is the table's kinds as a sentence's list: "host, switch or hub".
func List() string {
	names := make([]string, len(Table))
	for i, r := range Table {
		names[i] = string(r.Kind)
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// ATMKinds names the kinds that take ATM links: "hosts, atm-switches and routers".
func ATMKinds() string {
	var names []string
	for _, r := range Table {
		if r.Media != EthernetOnly {
			names = append(names, plural(string(r.Kind)))
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// plural is a kind's name for several: hosts, atm-switches.
func plural(k string) string {
	for _, end := range []string{"s", "x", "ch", "sh"} {
		if strings.HasSuffix(k, end) {
			return k + "es"
		}
	}
	return k + "s"
}

// ApplyDefaults fills what a node of its kind needs and the lab file left
// out; decoding and a variant that changes a node's kind both call it.
func ApplyDefaults(n *topologies.Node) {
	if r, ok := Of(n.Kind); ok && r.Defaults != nil {
		r.Defaults(n)
	}
}

// TakesInterfaces reports whether nodes of kind k have named interfaces.
func TakesInterfaces(k topologies.Kind) bool {
	r, ok := Of(k)
	return ok && r.HasInterfaces()
}

// EndsCLIP reports whether e is an interface of a kind that ends ATM links
// in an adapter running Classical IP (a host or a router): the ends of
// PVCs, where an atm-switch only relays them.
func EndsCLIP(lab *topologies.Lab, e topologies.Endpoint) bool {
	n := lab.Node(e.Node)
	if n == nil {
		return false
	}
	r, _ := Of(n.Kind)
	return r.Media == EthernetAndATM
}
