// Package web serves a running lab's live view: a page that draws the
// lab's topology and its counters a few times a second, the controls of
// atmlab set, and a lab run's progress and results. Everything it serves
// is embedded; it takes the lab's counters at most a few times a second,
// whatever the number of pages open.
package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/atmlab/atmlab/explorer"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/internal/webguard"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/settings"
)

//go:embed assets
var assets embed.FS

// Source is a lab the view shows: its topology, its counters (any JSON,
// as atmlab stats -o json prints them) and atmlab set's change.
type Source interface {
	Topology(ctx context.Context) (topologies.View, error)
	Stats(ctx context.Context) (any, error)
	Set(ctx context.Context, endpoint, direction string, c settings.Change) (any, error)
}

// DefaultInterval is how often the view takes the lab's counters at most.
const DefaultInterval = 250 * time.Millisecond

// TokenHeader carries the token that allows changes.
const TokenHeader = "X-Atmlab-Token"

// Server is the live view of one lab (in lab run, of each variant in turn).
type Server struct {
	Token    string        // required for changes
	Interval time.Duration // between two snapshots of the counters
	guard    *webguard.Guard
	mux      *http.ServeMux

	mu       sync.Mutex
	src      Source
	spec     *topologies.View
	run      *runState
	explorer http.Handler // the sawtooth explorer, at /explorer/

	snapMu sync.Mutex // one snapshot at a time; the others wait for it
	snap   []byte
	snapAt time.Time
	snaps  int // snapshots taken, for tests
}

// runState is a lab run's progress and its results so far.
type runState struct {
	Progress labrun.Progress `json:"progress"`
	Results  []result        `json:"results"`
}

// result is one measured point as the page plots it.
type result struct {
	Variant    string  `json:"variant"`
	Experiment string  `json:"experiment"`
	Test       string  `json:"test"`
	Size       int     `json:"size"`
	Throughput float64 `json:"throughput_bps"`
	Ceiling    float64 `json:"ceiling_bps"`
	TPS        float64 `json:"tps,omitempty"`
	Error      string  `json:"error,omitempty"`
}

// maxResults bounds what the view keeps of a long run.
const maxResults = 10000

// New returns a live view of src (nil until SetSource) that answers
// requests addressed to ln's address, with a fresh random token.
func New(ln net.Listener, src Source) *Server {
	b := make([]byte, 16)
	rand.Read(b)
	s := &Server{Token: hex.EncodeToString(b), Interval: DefaultInterval, guard: webguard.New(ln.Addr()), src: src,
		explorer: explorer.Handler("")}
	s.mux = http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	s.mux.Handle("GET /", http.FileServerFS(static))
	s.mux.HandleFunc("GET /api/topology", s.topology)
	s.mux.HandleFunc("GET /api/stats", s.stats)
	s.mux.HandleFunc("POST /api/set", s.set)
	s.mux.Handle("GET /explorer/", http.StripPrefix("/explorer", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		h := s.explorer
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	})))
	return s
}

// ExplorerResults has the sawtooth explorer (at /explorer/) plot the
// measured points of the results folder dir, as a lab run writes it.
func (s *Server) ExplorerResults(dir string) {
	s.mu.Lock()
	s.explorer = explorer.Handler(dir)
	s.mu.Unlock()
}

// URL is the address to open, with the token that allows changes.
func (s *Server) URL(ln net.Listener) string {
	return "http://" + ln.Addr().String() + "/?token=" + s.Token
}

// SetSource shows src from now on (nil: no lab is up, as between two
// variants of a lab run).
func (s *Server) SetSource(src Source) {
	s.mu.Lock()
	s.src, s.spec = src, nil
	s.mu.Unlock()
	s.snapMu.Lock()
	s.snap = nil
	s.snapMu.Unlock()
}

// Watch takes a lab run's progress (labrun.Runner.Watch).
func (s *Server) Watch(p labrun.Progress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.run == nil {
		s.run = &runState{Results: []result{}}
	}
	s.run.Progress = p
	s.run.Progress.Result = nil // kept in Results
	if r := p.Result; r != nil && len(s.run.Results) < maxResults {
		s.run.Results = append(s.run.Results, result{Variant: r.Variant, Experiment: r.Experiment, Test: r.Test, Size: r.Size,
			Throughput: r.Result.ThroughputBps, Ceiling: r.Ceiling, TPS: r.Result.TransactionsPerSec, Error: r.Error + r.Result.Error})
	}
}

// ServeHTTP refuses requests addressed to another name (DNS rebinding) or
// sent by another site's page, then serves the view.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.guard.Allow(w, r) {
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	if !strings.HasPrefix(r.URL.Path, "/explorer/") { // the explorer's page has an inline handler
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:")
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) source() Source {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.src
}

func (s *Server) topology(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	src, spec := s.src, s.spec
	s.mu.Unlock()
	if src == nil {
		writeError(w, http.StatusServiceUnavailable, "no lab is up yet")
		return
	}
	if spec == nil {
		sp, err := src.Topology(r.Context())
		if err != nil {
			writeError(w, http.StatusBadGateway, err.Error())
			return
		}
		spec = &sp
		s.mu.Lock()
		if s.src == src {
			s.spec = spec
		}
		s.mu.Unlock()
	}
	writeJSON(w, spec)
}

// stats answers the latest snapshot, taking a new one if it is older than
// the interval: however many pages poll, the lab is asked at most once an
// interval, and not at all with no page open.
func (s *Server) stats(w http.ResponseWriter, r *http.Request) {
	b, err := s.snapshot(r.Context())
	if err != nil {
		writeError(w, http.StatusBadGateway, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func (s *Server) snapshot(ctx context.Context) ([]byte, error) {
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	if s.snap != nil && time.Since(s.snapAt) < s.Interval {
		return s.snap, nil
	}
	s.mu.Lock()
	src := s.src
	var run *runState
	if s.run != nil {
		run = &runState{Progress: s.run.Progress, Results: s.run.Results[:len(s.run.Results):len(s.run.Results)]}
	}
	s.mu.Unlock()
	var st any
	if src != nil {
		var err error
		if st, err = src.Stats(ctx); err != nil {
			return nil, err
		}
	}
	b, err := json.Marshal(struct {
		At    int64     `json:"at_ms"` // wall clock, for the charts
		Up    bool      `json:"up"`
		Stats any       `json:"stats,omitempty"`
		Run   *runState `json:"run,omitempty"`
	}{time.Now().UnixMilli(), src != nil, st, run})
	if err != nil {
		return nil, err
	}
	s.snap, s.snapAt = b, time.Now()
	s.snaps++
	return b, nil
}

// setRequest is a change sent by the page: atmlab set's words.
type setRequest struct {
	Endpoint  string `json:"endpoint"`
	Direction string `json:"direction"`
	Settings  string `json:"settings"` // "delay=20ms rate=10M"
	Reset     bool   `json:"reset"`
}

// set applies a change; it needs the token.
func (s *Server) set(w http.ResponseWriter, r *http.Request) {
	if subtle.ConstantTimeCompare([]byte(r.Header.Get(TokenHeader)), []byte(s.Token)) != 1 {
		writeError(w, http.StatusForbidden, "read-only: changes need the token in the URL atmlab printed (…/?token=…)")
		return
	}
	var req setRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 4<<10)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "bad change: send JSON such as {\"endpoint\":\"h1:eth0\",\"settings\":\"delay=20ms\"}")
		return
	}
	c, err := settings.ParseChange(strings.Fields(req.Settings))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	c.Reset = req.Reset
	if c == (settings.Change{}) {
		writeError(w, http.StatusBadRequest, "nothing to change: give settings, such as delay=20ms, or reset")
		return
	}
	src := s.source()
	if src == nil {
		writeError(w, http.StatusServiceUnavailable, "no lab is up yet")
		return
	}
	out, err := src.Set(r.Context(), req.Endpoint, req.Direction, c)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.snapMu.Lock()
	s.snap = nil // the next poll shows the change
	s.snapMu.Unlock()
	writeJSON(w, out)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// Serve serves the view on ln until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: time.Minute}
	stop := context.AfterFunc(ctx, func() { hs.Close() })
	defer stop()
	err := hs.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
