package labshell

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// pingall pings every host from every other once and prints, as Mininet
// does, a line for each source (X for no answer) and the loss.
func (s *Shell) pingall(ctx context.Context) error {
	if len(s.hosts) < 2 {
		return fmt.Errorf("pingall: lab %s has fewer than two hosts", s.View.Lab)
	}
	sent, received := 0, 0
	for _, from := range s.hosts {
		line := from + " ->"
		for _, to := range s.hosts {
			if to == from {
				continue
			}
			addr, ok := s.addrs[to]
			if !ok {
				line += " -" // no address to ping
				continue
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			sent++
			// -W 2: an answer later than two seconds counts as lost.
			if s.command(ctx, from, []string{"ping", "-c", "1", "-W", "2", addr}).Run() == nil {
				received++
				line += " " + to
			} else {
				line += " X"
			}
		}
		fmt.Fprintln(s.Stdout, line)
	}
	fmt.Fprintf(s.Stdout, "pingall: %d%% dropped (%d/%d received)\n", 100*(sent-received)/max(sent, 1), received, sent)
	return nil
}

// iperf measures TCP throughput from host a to host b with iperf3: a
// server in b for one test, a client in a, and prints both ends' rates.
func (s *Shell) iperf(ctx context.Context, args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("iperf: give two hosts, such as iperf h1 h2")
	}
	from, to := args[0], args[1]
	for _, h := range args {
		if !s.isHost(h) {
			return fmt.Errorf("iperf: %s is not a host of lab %s (hosts: %s)", h, s.View.Lab, strings.Join(s.hosts, " "))
		}
	}
	addr, ok := s.addrs[to]
	if !ok {
		return fmt.Errorf("iperf: %s has no address", to)
	}
	secs := s.IperfTime
	if secs == 0 {
		secs = 5 * time.Second
	}
	srvCtx, stopSrv := context.WithCancel(ctx)
	defer stopSrv()
	// --forceflush: the server says it listens at once, not when its
	// output buffer fills.
	srv := s.command(srvCtx, to, []string{"iperf3", "-s", "-1", "--forceflush"})
	var srvErr bytes.Buffer
	srv.Stderr = &srvErr
	out, err := srv.StdoutPipe()
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return fmt.Errorf("iperf: start the server in %s: %w", to, err)
	}
	defer srv.Wait()
	defer stopSrv() // before Wait: a server the client never reached ends
	listening := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ok := false
		for sc.Scan() {
			if !ok && strings.Contains(sc.Text(), "listening") {
				ok = true
				listening <- true
			}
		}
		if !ok {
			listening <- false
		}
	}()
	select {
	case ok := <-listening:
		if !ok {
			return fmt.Errorf("iperf: the server in %s did not start: %s", to, strings.TrimSpace(srvErr.String()))
		}
	case <-time.After(10 * time.Second):
		return fmt.Errorf("iperf: the server in %s did not listen within 10s", to)
	case <-ctx.Done():
		return nil
	}
	fmt.Fprintf(s.Stdout, "iperf: TCP from %s to %s (%s) for %v\n", from, to, addr, secs)
	cli := s.command(ctx, from, []string{"iperf3", "-c", addr, "-t", fmt.Sprint(int(secs.Seconds())), "-J"})
	var cliOut, cliErr bytes.Buffer
	cli.Stdout, cli.Stderr = &cliOut, &cliErr
	runErr := cli.Run()
	if ctx.Err() != nil {
		return nil
	}
	var res struct {
		Error string `json:"error"`
		End   struct {
			Sent struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_sent"`
			Received struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(cliOut.Bytes(), &res); err != nil {
		return fmt.Errorf("iperf: the client in %s: %v %s", from, runErr, strings.TrimSpace(cliErr.String()))
	}
	if res.Error != "" {
		return fmt.Errorf("iperf: the client in %s: %s", from, res.Error)
	}
	fmt.Fprintf(s.Stdout, "iperf: %s sent %.2f Mbit/s, %s received %.2f Mbit/s\n",
		from, res.End.Sent.BitsPerSecond/1e6, to, res.End.Received.BitsPerSecond/1e6)
	return nil
}
