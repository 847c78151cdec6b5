package kinds

import "github.com/atmlab/atmlab/topologies"

// hostRow: a host, a network namespace with its own kernel, on Ethernet
// NICs or ATM adapters (Classical IP).
var hostRow = Row{Kind: topologies.KindHost, Keys: []string{"ipv4", "mtu", "interfaces", "routes", "sysctls", "cpu"}, Media: EthernetAndATM}
