// Package placement brings a split lab up and down on the engines atmlab
// campaign writes for: each part of the lab (its parts: key) is an
// `atmlab up FILE --part NAME` of its own, its cut ports listening on
// Port+k and sending to its neighbours' addresses, wherever the engine put
// them.
//
//	local       two network namespaces ("machines") joined by a veth, a part in each
//	slurm       one job, one task per part, peers from the nodes Slurm gave the tasks
//	kubernetes  a StatefulSet (pod k runs part k) behind a headless Service: peers by DNS name
//
// Up stays in the foreground until its context ends (SIGINT, SIGTERM) or a
// part stops, then brings every part down and writes one results folder:
// each part's log and split.json, what ran where and how it ended. Down
// removes what a killed split lab left.
package placement

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/atmlab/atmlab/campaign"
)

// DefaultPort is the cut port of a lab's first part: part k listens on
// DefaultPort+k, so that parts sharing a machine (a one-node Slurm) do not
// collide.
const DefaultPort = 47000

// Split is a split lab placed on an engine.
type Split struct {
	File   string          // the lab file, an absolute path
	Lab    string          // the lab's name
	Parts  []string        // the parts' names, in the lab file's order
	Peers  [][]int         // Peers[k]: the parts part k shares a cut with, in order
	Engine campaign.Engine // where the parts run
	Out    string          // the results folder, an absolute path
	Binary string          // the atmlab the local and Slurm parts run, an absolute path
	Image  string          // the container image the pods run (Kubernetes)
	Port   int             // part k's cut port is Port+k
	Src    []byte          // the lab file's bytes (Kubernetes' ConfigMap)
}

// Name is the base of everything the engine names for the split lab (the
// Slurm job, the Kubernetes objects): atmlab-<lab>-split as a DNS label.
func (s Split) Name() string {
	return strings.TrimRight(campaign.Plan{Name: s.Lab}.JobName(), "-") + "-split"
}

// Listen is part k's cut address on every interface of where it runs.
func (s Split) Listen(k int) string { return "0.0.0.0:" + strconv.Itoa(s.Port+k) }

// PartArgs is part k's command line after the program: up FILE --part
// NAME --cut-listen ADDR --cut-peer PART=ADDR,..., host(j) giving the host
// part j runs on as the engine knows it (an address, a node or DNS name,
// or shell text that expands to one).
func (s Split) PartArgs(file string, k int, host func(j int) string) []string {
	var peers []string
	for _, j := range s.Peers[k] {
		peers = append(peers, s.Parts[j]+"="+host(j)+":"+strconv.Itoa(s.Port+j))
	}
	return []string{"up", file, "--part", s.Parts[k], "--cut-listen", s.Listen(k), "--cut-peer", strings.Join(peers, ",")}
}

// PartLab is the name part k's instance runs its lab under: LAB-PART,
// so that two parts on one machine share no namespace, lock or socket.
func (s Split) PartLab(k int) string { return s.Lab + "-" + s.Parts[k] }

// DownArgs is the command line that removes what part k left.
func (s Split) DownArgs(k int) []string { return []string{"down", s.PartLab(k)} }

// LogName is part k's log in the results folder.
func (s Split) LogName(k int) string { return "part-" + s.Parts[k] + ".log" }

// StatsName is part k's last stats in the results folder: what atmlab
// stats LAB-PART -o json said just before the part was stopped.
func (s Split) StatsName(k int) string { return "part-" + s.Parts[k] + ".stats.json" }

// StatsArgs is the command line that asks part k for its stats.
func (s Split) StatsArgs(k int) []string { return []string{"stats", s.PartLab(k), "-o", "json"} }

// Check returns what is wrong with the split, one problem with its fix.
func (s Split) Check() error {
	switch {
	case len(s.Parts) < 2:
		return fmt.Errorf("%s: a split lab has at least two parts (parts: in the lab file)", s.File)
	case len(s.Peers) != len(s.Parts):
		return fmt.Errorf("%s: %d parts but %d peer lists", s.File, len(s.Parts), len(s.Peers))
	case s.Port < 1 || s.Port+len(s.Parts) > 65536:
		return fmt.Errorf("cut port %d: use 1 to %d for %d parts", s.Port, 65536-len(s.Parts), len(s.Parts))
	case !filepath.IsAbs(s.File) || !filepath.IsAbs(s.Out):
		return fmt.Errorf("split paths must be absolute: lab %q, out %q", s.File, s.Out)
	}
	for k, peers := range s.Peers {
		for _, j := range peers {
			if j < 0 || j >= len(s.Parts) || j == k {
				return fmt.Errorf("part %s: peer %d is not another part", s.Parts[k], j)
			}
		}
		if !slices.IsSorted(peers) {
			return fmt.Errorf("part %s: peers %v out of order", s.Parts[k], peers)
		}
	}
	return nil
}
