//go:build linux

package kernel

import (
	"net"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// RunningLab is a lab whose control socket answers (atmlab ls).
type RunningLab struct {
	Name  string    `json:"name"`
	Owner string    `json:"owner"`
	Since time.Time `json:"since"` // when its control socket was bound
	Web   string    `json:"web,omitempty"`
}

// Running lists the labs whose control sockets answer this user, where
// `atmlab stats` looks for them (a normal user's are theirs alone, as
// root's are root's). A socket a killed lab left behind does not answer
// and is not listed.
func Running() ([]RunningLab, error) {
	dirs := []string{RunDir}
	if RunDir != "/run/atmlab" {
		dirs = append(dirs, "/run/atmlab")
	}
	var out []RunningLab
	for _, dir := range dirs {
		socks, _ := filepath.Glob(filepath.Join(dir, "*.sock"))
		for _, p := range socks {
			name := strings.TrimSuffix(filepath.Base(p), ".sock")
			if slices.ContainsFunc(out, func(l RunningLab) bool { return l.Name == name }) {
				continue
			}
			fi, err := os.Stat(p)
			if err != nil {
				continue
			}
			c, err := net.DialTimeout("unix", p, 500*time.Millisecond)
			if err != nil {
				continue
			}
			c.Close()
			l := RunningLab{Name: name, Since: fi.ModTime()}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				l.Owner = strconv.Itoa(int(st.Uid))
				if u, err := user.LookupId(l.Owner); err == nil {
					l.Owner = u.Username
				}
			}
			if b, err := os.ReadFile(webPath(dir, name)); err == nil {
				l.Web = strings.TrimSpace(string(b))
			}
			out = append(out, l)
		}
	}
	return out, nil
}

// webPath is where a running lab's live-view address is kept for ls.
func webPath(dir, lab string) string { return filepath.Join(dir, lab+".web") }

// AdvertiseWeb records a running lab's live-view address (without its
// token) for atmlab ls; the returned function removes it, as Down does
// after a crash.
func AdvertiseWeb(lab, addr string) (remove func()) {
	p := webPath(RunDir, lab)
	if err := os.WriteFile(p, []byte(addr+"\n"), 0o644); err != nil {
		return func() {}
	}
	return func() { os.Remove(p) }
}
