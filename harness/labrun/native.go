package labrun

import (
	"fmt"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/topologies"
)

// NativeSpec sets a native AAL test's VCs in spec from the lab's native
// PVC between the point's hosts; an error if there is none, or if its
// links run another AAL than the test's name says. Other tests are left
// alone.
func NativeSpec(lab *topologies.Lab, from, to string, spec *perf.Spec) error {
	if !perf.IsAAL(spec.Test) {
		return nil
	}
	a, b, err := lab.NativePVC(from, to)
	if err != nil {
		return fmt.Errorf("%s: %w", spec.Test, err)
	}
	for _, e := range []topologies.NativeEnd{a, b} {
		if string(e.AAL) != perf.AALOf(spec.Test) {
			return fmt.Errorf("%s from %s to %s: the native PVC's links run %s; use %s", spec.Test, from, to, e.AAL, aalTestFor(spec.Test, string(e.AAL)))
		}
	}
	spec.VC = &perf.NativeVC{Iface: a.Iface, VPI: uint16(a.VC.VPI), VCI: uint16(a.VC.VCI)}
	spec.PeerVC = &perf.NativeVC{Iface: b.Iface, VPI: uint16(b.VC.VPI), VCI: uint16(b.VC.VCI)}
	return nil
}

// aalTestFor is test's counterpart on an adaptation layer.
func aalTestFor(test, aal string) string {
	rr := test == perf.AAL5RR || test == perf.AAL34RR
	switch {
	case aal == "aal34" && rr:
		return perf.AAL34RR
	case aal == "aal34":
		return perf.AAL34Stream
	case rr:
		return perf.AAL5RR
	}
	return perf.AAL5Stream
}
