package labrun

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/topologies"
)

// HardwareFigure is a lab file's reference figure, resolved to a number:
// bits/s for streams, transactions/s for request/response tests.
type HardwareFigure struct {
	Experiment string  `json:"experiment,omitempty"`
	Test       string  `json:"test"`
	Tool       string  `json:"tool,omitempty"` // atmlab if empty
	Size       int     `json:"size,omitempty"`
	Value      float64 `json:"value"` // bits/s or transactions/s
	As         string  `json:"as"`    // the figure as the source gave it
	Source     string  `json:"source"`
	Error      string  `json:"error,omitempty"`
}

// ResolveReferences reads a lab's reference figures, opening result files.
func ResolveReferences(lab *topologies.Lab) []HardwareFigure {
	var out []HardwareFigure
	for _, r := range lab.References {
		h := HardwareFigure{Experiment: r.Experiment, Test: r.Test, Tool: r.Tool, Size: r.Size, Source: r.Source}
		if r.File == "" {
			h.Value, h.As = r.Normalized(), r.Label()
		} else {
			data, err := r.Read() // bounded, and only under the lab file's directory
			if err == nil {
				if r.Format == "iperf3" {
					h.Value, err = fromIperf3(data)
				} else {
					h.Value, err = fromNetperf(string(data), r.Test)
				}
			}
			h.As = filepath.Base(r.File)
			if err != nil {
				h.Error = err.Error()
			}
		}
		out = append(out, h)
	}
	return out
}

// fromIperf3 reads an iperf3 -J report: what the receiver got.
func fromIperf3(data []byte) (float64, error) {
	var rep struct {
		End struct {
			SumReceived struct {
				Bps float64 `json:"bits_per_second"`
			} `json:"sum_received"`
			Sum struct {
				Bps float64 `json:"bits_per_second"`
			} `json:"sum"`
		} `json:"end"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		return 0, fmt.Errorf("iperf3 -J: %w", err)
	}
	if v := rep.End.SumReceived.Bps; v > 0 {
		return v, nil
	}
	if v := rep.End.Sum.Bps; v > 0 {
		return v, nil
	}
	return 0, fmt.Errorf("iperf3 -J: no receiver figure")
}

// fromNetperf reads netperf's classic output: the throughput (or the
// transaction rate) in the unit its header names. UDP_STREAM's figure is
// the receive line, the last one; other tests take the fullest data line.
func fromNetperf(text, test string) (float64, error) {
	scale := 0.0
	var best []float64
	for _, line := range strings.Split(text, "\n") {
		l := strings.ToLower(line)
		switch {
		case strings.Contains(l, "10^9bits"):
			scale = 1e9
		case strings.Contains(l, "10^6bits"):
			scale = 1e6
		case strings.Contains(l, "10^3bits"):
			scale = 1e3
		case strings.Contains(l, "mbytes/sec"):
			scale = 8 * 1 << 20 // -f M: 2^20 bytes
		case strings.Contains(l, "kbytes/sec"):
			scale = 8 * 1 << 10
		case strings.Contains(l, "per sec"):
			scale = 1 // transactions
		}
		var nums []float64
		for _, f := range strings.Fields(line) {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				nums = nil
				break
			}
			nums = append(nums, v)
		}
		if len(nums) >= 2 && (test == perf.UDPStream || len(nums) >= len(best)) {
			best = nums
		}
	}
	if best == nil || scale == 0 {
		return 0, fmt.Errorf("netperf output: no result line with a unit")
	}
	return best[len(best)-1] * scale, nil
}
