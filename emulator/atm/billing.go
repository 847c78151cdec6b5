package atm

import (
	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator"
)

// Billing is ATM's wire billing, the one the adapters' segmenters agree
// with and every ceiling and pacer uses: what an IP packet costs on a
// Classical IP over ATM path. The packet takes its encapsulation's header
// (RFC 2684), is one CPCS-PDU of its AAL in whole cells (AAL5's 48 payload
// octets a cell, AAL3/4's 44), and each cell is one slot of the PHY.
type Billing struct {
	PHY   PHY
	AAL   AAL
	Encap cells.Encap
}

// Cells returns the cells an IP packet of ip octets takes.
func (b Billing) Cells(ip int) int { return b.AAL.Cells(ip + b.Encap.Overhead()) }

// LineOctets returns the octet times an IP packet of ip octets holds the
// line at PHY.LineRate: PHY.CellOctets a cell (53; 54 on ATM25).
func (b Billing) LineOctets(ip int) int { return b.Cells(ip) * b.PHY.CellOctets }

// FrameCells returns the cells a host's frame of n octets takes: the
// adapter sends the packet in it, without the Ethernet header.
func (b Billing) FrameCells(n int) int { return b.Cells(max(n-emulator.EtherHeader, 0)) }
