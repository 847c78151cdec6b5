package doccheck

import (
	"bytes"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/topologies/labfile"
)

// root is the repository's root, or the test stops.
func root(t *testing.T) string {
	t.Helper()
	r, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// pages reads the manual's pages, by their path from the root.
func pages(t *testing.T, r string) map[string]Page {
	t.Helper()
	names, err := Pages(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 3 {
		t.Fatalf("found only %v: is the root %s?", names, r)
	}
	out := map[string]Page{}
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(r, n))
		if err != nil {
			t.Fatal(err)
		}
		out[n] = Parse(data)
	}
	return out
}

// TestManualLinksResolve checks that every relative link and image in
// README.md, CHANGELOG.md and docs/ names a file that exists, and that a
// #fragment into a Markdown page names one of its headings.
func TestManualLinksResolve(t *testing.T) {
	r := root(t)
	all := pages(t, r)
	for name, p := range all {
		for _, l := range p.Links() {
			u, err := url.Parse(l.Target)
			if err != nil {
				t.Errorf("%s:%d: link %q does not parse: %v", name, l.Line, l.Target, err)
				continue
			}
			if u.Scheme != "" || u.Host != "" {
				continue // the web's links are not the manual's to check
			}
			target := name
			if u.Path != "" {
				if strings.HasPrefix(u.Path, "/") {
					t.Errorf("%s:%d: link %q is absolute: write it relative to the page, so that it works on a forge and in the site", name, l.Line, l.Target)
					continue
				}
				target = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(name), u.Path)))
				if _, err := os.Stat(filepath.Join(r, target)); err != nil {
					t.Errorf("%s:%d: link %q: %s does not exist", name, l.Line, l.Target, target)
					continue
				}
			}
			if u.Fragment == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			tp, ok := all[target]
			if !ok {
				data, err := os.ReadFile(filepath.Join(r, target))
				if err != nil {
					t.Errorf("%s:%d: link %q: %v", name, l.Line, l.Target, err)
					continue
				}
				tp = Parse(data)
			}
			if !tp.Anchors()[u.Fragment] {
				t.Errorf("%s:%d: link %q: %s has no heading whose anchor is #%s", name, l.Line, l.Target, target, u.Fragment)
			}
		}
	}
}

// TestManualLabFilesValidate checks that every lab file the manual shows
// validates with the real decoder, as `atmlab validate` would (every variant
// resolved): each fenced yaml block with a top-level topology: (one without
// name: is given one, as a fragment of a lab), and every .yaml under docs/.
func TestManualLabFilesValidate(t *testing.T) {
	r := root(t)
	topLevel := regexp.MustCompile(`(?m)^topology:`)
	named := regexp.MustCompile(`(?m)^name:`)
	n := 0
	for name, p := range pages(t, r) {
		for _, b := range p.Blocks {
			if b.Lang != "yaml" && b.Lang != "yml" {
				continue
			}
			text := strings.Join(b.Lines, "\n") + "\n"
			if !topLevel.MatchString(text) {
				continue
			}
			if !named.MatchString(text) {
				text = "name: doc\n" + text
			}
			n++
			// Relative paths in the lab (reference files) are the page's.
			file := filepath.Join(r, filepath.Dir(name), "block.yaml")
			if err := validate(file, []byte(text)); err != nil {
				t.Errorf("%s: the lab file in the block at line %d does not validate:\n%v", name, b.Line, err)
			}
		}
	}
	err := filepath.WalkDir(filepath.Join(r, "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		if err := validate(p, data); err != nil {
			t.Errorf("%s does not validate:\n%v", p, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("found no lab file in the manual: the tutorial's are in docs/tutorial/")
	}
}

// validate checks a lab file as `atmlab validate` does.
func validate(file string, data []byte) error {
	lab, err := labfile.Parse(file, data)
	if err != nil {
		return err
	}
	_, err = lab.ResolveVariants(lab.Measured())
	return err
}

// trackerWords are the marks of a work tracker, which the product does not
// carry: a ticket's number or the ticket itself as the reason ("as the
// ticket asks", with the tracker's own word for ticket), a plan's labels,
// a work session's number. The pattern is built so that this file does
// not match it.
var trackerWords = regexp.MustCompile(`(?i)` + tracker + `s? #?[0-9]+|[(]` + tracker + `|\b(the|this|that|an?) ` + tracker + `\b|must` + `-show|session #?[0-9]+`)

// tracker is the tracker's word for a ticket, spelt so that this file does
// not name one.
const tracker = "iss" + "ue"

// TestNoTrackerWords checks that no tracked file (code, comments, tests,
// docs, scripts, data: all git ls-files lists) names a ticket, a plan's
// labels or a work session: they say what the behaviour is, not which
// piece of work brought it.
func TestNoTrackerWords(t *testing.T) {
	r := root(t)
	files, err := tracked(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(r, f))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // deleted in the work tree, not yet in the index
			}
			t.Fatal(err)
		}
		if bytes.IndexByte(data, 0) >= 0 {
			continue // binary
		}
		for i, l := range strings.Split(string(data), "\n") {
			if m := trackerWords.FindString(l); m != "" {
				t.Errorf("%s:%d: %q: say what the behaviour is, not which piece of work brought it", f, i+1, m)
			}
		}
	}
}

// The tracker pattern catches a ticket's number, the ticket as a reason
// and a plan's labels, and leaves plain English alone.
func TestTrackerWordsKnownAnswers(t *testing.T) {
	for line, want := range map[string]bool{
		"see " + tracker + " 15":                    true,
		"fixed (" + tracker + " 4)":                 true,
		tracker + "s 2 and 3":                       true,
		"closes " + tracker + " #12":                true,
		"as the " + tracker + " asks, under 2 min":  true,
		"what this " + tracker + " needs":           true,
		"the must" + "-show list":                   true,
		"from sess" + "ion 3 on":                    true,
		"what the picture must show":                false,
		"to load completions in your shell session": false,
		"a frame issued at 10 ms":                   false,
		"the colour #1f77b4":                        false,
	} {
		if got := trackerWords.MatchString(line); got != want {
			t.Errorf("%q: matched %v, want %v", line, got, want)
		}
	}
}

// tracked lists the repository's tracked files (git ls-files), or, where
// there is no git, every file under the root but .git and build output.
func tracked(r string) ([]string, error) {
	if out, err := exec.Command("git", "-C", r, "ls-files", "-z").Output(); err == nil {
		var files []string
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
		return files, nil
	}
	var files []string
	err := filepath.WalkDir(r, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r, p)
		if d.IsDir() && (rel == ".git" || rel == "bin" || rel == "results" || rel == "site") {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	return files, err
}

func TestWordsEndWhereTheShellWould(t *testing.T) {
	for line, want := range map[string]string{
		`atmlab up lab.yaml &`:                         "atmlab up lab.yaml",
		`atmlab stats first -o json | jq .`:            "atmlab stats first -o json",
		`atmlab lab run f.yaml 2>&1 | tail`:            "atmlab lab run f.yaml",
		`atmlab set x h1:eth0 delay=20ms  # both ways`: "atmlab set x h1:eth0 delay=20ms",
		`atmlab exec x h1 -- sh -c "a b"`:              "atmlab exec x h1 -- sh -c a b",
	} {
		if got := strings.Join(Words(line), " "); got != want {
			t.Errorf("Words(%q) = %q, want %q", line, got, want)
		}
	}
}

func TestParseFindsBlocksCommandsAndLinks(t *testing.T) {
	p := Parse([]byte("# A title\n\nSee [x](a.md#b) and ![i](p.png) `[no](c.md)`.\n\n    atmlab validate f.yaml\n\n```yaml\nname: x\n```\n\n```sh\n$ sudo ./bin/atmlab up f.yaml\n```\n\n- a list\n\n    continued, not code\n"))
	if len(p.Blocks) != 3 {
		t.Fatalf("blocks %+v, want 3", p.Blocks)
	}
	cmds := p.Commands()
	if len(cmds) != 2 || cmds[0].Text != "atmlab validate f.yaml" || cmds[1].Text != "atmlab up f.yaml" || cmds[1].Line != 12 {
		t.Errorf("commands %+v", cmds)
	}
	links := p.Links()
	if len(links) != 2 || links[0].Target != "a.md#b" || links[1].Target != "p.png" {
		t.Errorf("links %+v", links)
	}
	if !p.Anchors()["a-title"] {
		t.Errorf("anchors %v", p.Anchors())
	}
}

// TestTutorialShowsItsFiles checks that each YAML block of the tutorial is
// part of one of its lab files in docs/tutorial/, as the files are (steps
// shown whole, the experiments as they end the last), or, a change it
// suggests, validates added to the tutorial's last lab.
func TestTutorialShowsItsFiles(t *testing.T) {
	r := root(t)
	data, err := os.ReadFile(filepath.Join(r, "docs", "tutorial.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(r, "docs", "tutorial", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no lab files in docs/tutorial/: %v", err)
	}
	var texts []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
	}
	last := filepath.Join(r, "docs", "tutorial", "first-lab.yaml")
	lastText, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range Parse(data).Blocks {
		if b.Lang != "yaml" {
			continue
		}
		n++
		block := strings.Join(b.Lines, "\n") + "\n"
		if slices.ContainsFunc(texts, func(f string) bool { return strings.Contains(f, block) }) {
			continue
		}
		if err := validate(last, append(append([]byte{}, lastText...), block...)); err != nil {
			t.Errorf("docs/tutorial.md:%d: the block is in no file of docs/tutorial/, and added to first-lab.yaml it does not validate:\n%v", b.Line, err)
		}
	}
	if n < 4 {
		t.Errorf("found %d YAML blocks in the tutorial, want its three steps and its experiments", n)
	}
}

// TestSiteNavListsEveryPage checks that each page at the top of docs/ is in
// mkdocs.yml's nav, where the site's readers find it (mkdocs only notes a
// page left out). A nav entry without its page fails `make docs` itself.
func TestSiteNavListsEveryPage(t *testing.T) {
	r := root(t)
	data, err := os.ReadFile(filepath.Join(r, "mkdocs.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Nav []any `yaml:"nav"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("mkdocs.yml: %v", err)
	}
	inNav := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			inNav[v] = true
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(cfg.Nav)
	pages, err := filepath.Glob(filepath.Join(r, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		if name := filepath.Base(p); !inNav[name] {
			t.Errorf("docs/%s is not in mkdocs.yml's nav: add it where it belongs", name)
		}
	}
}
