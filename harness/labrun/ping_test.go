package labrun

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/topologies/labfile"
)

// pingEnv is a lab whose hosts' ping prints out and records its target.
type pingEnv struct {
	out     string
	targets []string
}

func (e *pingEnv) Command(node string, args ...string) *exec.Cmd {
	e.targets = append(e.targets, node+" "+strings.Join(args, " "))
	return exec.Command("printf", "%s", e.out)
}

func (e *pingEnv) Emulator(context.Context) (Health, error) { return Health{}, nil }

const pingOut = `PING 10.0.0.4 (10.0.0.4) 56(84) bytes of data.
64 bytes from 10.0.0.4: icmp_seq=1 ttl=64 time=0.412 ms
64 bytes from 10.0.0.4: icmp_seq=2 ttl=64 time=0.118 ms
64 bytes from 10.0.0.4: icmp_seq=3 ttl=64 time=0.131 ms
64 bytes from 10.0.0.4: icmp_seq=4 ttl=64 time=0.125 ms
64 bytes from 10.0.0.4: icmp_seq=5 ttl=64 time=1.05 ms

--- 10.0.0.4 ping statistics ---
5 packets transmitted, 5 received, 0% packet loss, time 41ms
rtt min/avg/max/mdev = 0.118/0.367/1.050/0.357 ms
`

// Each host pair the points measure is pinged once, loopback points not
// at all: the median round trip.
func TestPingPaths(t *testing.T) {
	if got := medianPing([]byte(pingOut)); got != 131*time.Microsecond {
		t.Errorf("median of ping's lines: %v, want 131µs", got)
	}
	if got := medianPing([]byte("ping: connect: Network is unreachable\n")); got != 0 {
		t.Errorf("no replies: %v, want 0", got)
	}
	lab, err := labfile.Parse("p.yaml", []byte(`name: p
topology:
  nodes:
    a2: {kind: host, ipv4: 10.0.0.2/24}
    a4: {kind: host, ipv4: 10.0.0.4/24}
  links:
    - {endpoints: ["a2:eth0", "a4:eth0"]}
experiments:
  - {name: loop, from: a2, to: a2, tests: [TCP_STREAM], duration: 10ms}
  - {name: s, from: a2, to: a4, tests: [TCP_STREAM, UDP_STREAM], duration: 10ms}
`))
	if err != nil {
		t.Fatal(err)
	}
	env := &pingEnv{out: pingOut}
	h := &HostsEnv{Hosts: env, Lab: lab, Self: "atmlab"}
	paths := h.pingPaths(context.Background(), Points(lab))
	if len(paths) != 1 || paths[[2]string{"a2", "a4"}] != 131*time.Microsecond || len(env.targets) != 1 || !strings.HasPrefix(env.targets[0], "a2 ping -n -c 10 -i 0.01 -W 1 10.0.0.4") {
		t.Errorf("paths %v after commands %q; want a2 -> a4 pinged once, 131µs", paths, env.targets)
	}
}
