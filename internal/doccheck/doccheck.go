// Package doccheck reads the manual (README.md, CHANGELOG.md and docs/) for
// the tests that keep it true: its links resolve, its lab files validate and
// its commands name real verbs and flags. It is used by tests only.
package doccheck

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Root returns the repository's root: the nearest directory above the
// working directory (a test's package) that holds go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = up
	}
}

// Pages returns the manual's Markdown files, relative to root: README.md
// and CHANGELOG.md where they exist, and every .md under docs/, sorted.
func Pages(root string) ([]string, error) {
	var pages []string
	for _, top := range []string{"README.md", "CHANGELOG.md"} {
		if _, err := os.Stat(filepath.Join(root, top)); err == nil {
			pages = append(pages, top)
		}
	}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			pages = append(pages, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(pages)
	return pages, err
}

// Block is a code block of a page: fenced (its info string's first word in
// Lang) or indented by four spaces (Lang empty).
type Block struct {
	Lang  string
	Line  int      // the line of its first line of code, from 1
	Lines []string // its code, the indentation of an indented block removed
}

// Page is a Markdown page split into its code blocks and its prose.
type Page struct {
	Blocks []Block
	// Prose holds the page's lines outside code blocks, by line number from
	// 1 (a code block's lines are empty strings).
	Prose []string
}

var fence = regexp.MustCompile("^ {0,3}(```+|~~~+)\\s*([^`\\s]*)")

// Parse splits a Markdown page into its code blocks and its prose. An
// indented block starts after a blank line, outside a list item's text.
func Parse(data []byte) Page {
	var p Page
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	p.Prose = make([]string, len(lines)+1)
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if m := fence.FindStringSubmatch(l); m != nil {
			b := Block{Lang: strings.ToLower(m[2]), Line: i + 2}
			closer := m[1]
			indent := len(l) - len(strings.TrimLeft(l, " "))
			for i++; i < len(lines); i++ {
				t := strings.TrimLeft(lines[i], " ")
				if strings.HasPrefix(t, closer) && strings.TrimSpace(strings.TrimLeft(t, closer[:1])) == "" {
					break
				}
				c := lines[i]
				if len(c)-len(strings.TrimLeft(c, " ")) >= indent {
					c = c[indent:]
				}
				b.Lines = append(b.Lines, c)
			}
			p.Blocks = append(p.Blocks, b)
			continue
		}
		if strings.HasPrefix(l, "    ") && (i == 0 || strings.TrimSpace(lines[i-1]) == "") && !inList(lines, i) {
			b := Block{Line: i + 1}
			for ; i < len(lines); i++ {
				if strings.HasPrefix(lines[i], "    ") {
					b.Lines = append(b.Lines, lines[i][4:])
					continue
				}
				if strings.TrimSpace(lines[i]) == "" && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "    ") {
					b.Lines = append(b.Lines, "")
					continue
				}
				break
			}
			i--
			p.Blocks = append(p.Blocks, b)
			continue
		}
		p.Prose[i+1] = l
	}
	return p
}

// inList reports whether line i, indented, continues a list item: the
// nearest non-blank line above at a lower indentation is one.
func inList(lines []string, i int) bool {
	for j := i - 1; j >= 0; j-- {
		t := strings.TrimSpace(lines[j])
		if t == "" || strings.HasPrefix(lines[j], "    ") {
			continue
		}
		return strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || regexp.MustCompile(`^\d+\. `).MatchString(t)
	}
	return false
}

// Link is a link or image target in a page's prose.
type Link struct {
	Line   int
	Target string
}

var (
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refLink    = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	htmlSrc    = regexp.MustCompile(`<(?:img|a)\s[^>]*(?:src|href)="([^"]+)"`)
	inlineCode = regexp.MustCompile("`+[^`]*`+")
)

// Links returns the links and images of a page's prose (inline code left
// out): Markdown's inline and reference links and HTML img and a tags.
func (p Page) Links() []Link {
	var links []Link
	for n, l := range p.Prose {
		l = inlineCode.ReplaceAllString(l, "")
		for _, re := range []*regexp.Regexp{inlineLink, refLink, htmlSrc} {
			for _, m := range re.FindAllStringSubmatch(l, -1) {
				links = append(links, Link{Line: n, Target: m[1]})
			}
		}
	}
	return links
}

var heading = regexp.MustCompile(`^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$`)

// Anchors returns the anchors a page's headings make, as a forge (GitHub)
// and as mkdocs name them, and any explicit id="..." or name="...".
func (p Page) Anchors() map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	ids := regexp.MustCompile(`(?:id|name)="([^"]+)"`)
	for _, l := range p.Prose {
		for _, m := range ids.FindAllStringSubmatch(l, -1) {
			anchors[m[1]] = true
		}
		m := heading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		for _, slug := range []string{forgeSlug(m[1]), mkdocsSlug(m[1])} {
			anchors[slug] = true
		}
		s := forgeSlug(m[1])
		if k := seen[s]; k > 0 {
			anchors[s+"-"+itoa(k)] = true
			anchors[mkdocsSlug(m[1])+"_"+itoa(k)] = true
		}
		seen[s]++
	}
	return anchors
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// plain is a heading's text without Markdown's emphasis, code marks and links' targets.
func plain(h string) string {
	h = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(h, "$1")
	return h
}

// forgeSlug is GitHub's anchor for a heading: lower case, letters, digits,
// spaces (as hyphens), hyphens and underscores kept, the rest dropped.
func forgeSlug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(plain(h)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// mkdocsSlug is Python-Markdown's toc anchor: word characters, spaces and
// hyphens kept, lower case, runs of spaces and hyphens one hyphen.
func mkdocsSlug(h string) string {
	var b strings.Builder
	for _, r := range plain(h) {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == ' ') {
			b.WriteRune(r)
		}
	}
	s := strings.ToLower(strings.TrimSpace(b.String()))
	return regexp.MustCompile(`[-\s]+`).ReplaceAllString(s, "-")
}

// Command is an atmlab command line shown in a page's code block.
type Command struct {
	Line int
	Text string // from "atmlab" on: sudo, ./bin/ and a shell prompt removed
}

// columnGap ends a command in a two-column listing (design.md's).
var columnGap = regexp.MustCompile(`\s{3,}[^#\s]`)

var commandStart = regexp.MustCompile(`^(?:\$\s+|#\s+)?(?:sudo\s+(?:-E\s+)?)?(?:\./bin/|bin/)?atmlab\s`)

// Commands returns the atmlab command lines of a page's code blocks, shell
// blocks and indented ones (YAML and other languages are not commands); a
// line ending in a backslash continues on the next.
func (p Page) Commands() []Command {
	var cmds []Command
	for _, b := range p.Blocks {
		switch b.Lang {
		case "", "sh", "shell", "bash", "console", "text":
		default:
			continue
		}
		for i := 0; i < len(b.Lines); i++ {
			l := strings.TrimSpace(b.Lines[i])
			loc := commandStart.FindStringIndex(l + " ")
			if loc == nil {
				continue
			}
			line := b.Line + i
			text := l
			for strings.HasSuffix(text, `\`) && i+1 < len(b.Lines) {
				i++
				text = strings.TrimSuffix(text, `\`) + " " + strings.TrimSpace(b.Lines[i])
			}
			text = text[strings.Index(text, "atmlab"):]
			if i := columnGap.FindStringIndex(text); i != nil {
				text = text[:i[0]] // a listing's second column describes the command
			}
			cmds = append(cmds, Command{Line: line, Text: text})
		}
	}
	return cmds
}

// Words splits a command line as a shell would into words, up to its end:
// a comment, a pipe, a redirection, &&, ; or &. Quotes group words.
func Words(line string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	flush := func() {
		if inWord {
			words = append(words, cur.String())
		}
		cur.Reset()
		inWord = false
	}
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			flush()
		case r == '#' && !inWord, r == '|' || r == '>' || r == '<' || r == ';' || r == '&':
			if (r == '>' || r == '<') && strings.Trim(cur.String(), "0123456789") == "" {
				inWord = false // 2>&1: the descriptor is no word
			}
			flush()
			return words
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	flush()
	return words
}

// A figure table's header names what a benchmark row names: atmlab beside
// something measured, a ratio, a veth pair, the ceiling's share, the load.
var figureHeader = regexp.MustCompile(`(?i)^\|.*(\batmlab\b|\bmeasured\b|\bratio\b|veth|of the ceiling|wall s|times as fast|emulator added|short by|buffers|spacing|\bload\b)`)

var (
	figureDate    = regexp.MustCompile(`\b20\d\d-\d\d-\d\d\b`)
	figureCommand = regexp.MustCompile("`(go |make|sudo |scripts/|ATMLAB|flock |atmlab |env |GO=|Test|Bench)[^`]*`")
	figureLoad    = regexp.MustCompile(`(?i)\bload\b`)
)

// UnsourcedFigureTables returns the lines of the page's tables of measured
// figures whose section (its heading and prose up to the table) does not
// give a date, the command that measured them (in backticks) and the
// machine's load, or say the load was not noted: what a reader needs to
// reproduce a figure or to know it is an old one. Tables in code blocks (a
// command's own output) are left out.
func (p Page) UnsourcedFigureTables() []int {
	var bad []int
	start := 1 // the section's first line: its heading, or the page's top
	for i := 1; i < len(p.Prose); i++ {
		l := p.Prose[i]
		if strings.HasPrefix(l, "#") {
			start = i
			continue
		}
		if !strings.HasPrefix(l, "|") || strings.HasPrefix(p.Prose[i-1], "|") || !figureHeader.MatchString(l) {
			continue
		}
		var sb strings.Builder
		for _, s := range p.Prose[start:i] {
			if !strings.HasPrefix(s, "|") {
				sb.WriteString(s)
				sb.WriteByte('\n')
			}
		}
		s := sb.String()
		if !figureDate.MatchString(s) || !figureCommand.MatchString(s) || !figureLoad.MatchString(s) {
			bad = append(bad, i)
		}
	}
	return bad
}

// A dated figure: a date, a machine's load or a figure only a measurement
// gives (latencies, transaction and frame rates, speed-ups).
var datedFigure = regexp.MustCompile(`(?i)\b20\d\d-\d\d-\d\d\b|\bload average\b|\b\d[\d.,]* ?(µs|transactions/s|kframes/s|k cells/s)|\b\d+\.\d+ ?x\b|\d+\.\d+ times as fast`)

// DatedFigures returns the lines of the page's prose (code blocks left out)
// that state a dated measurement: a date, a load, a latency, a transaction
// or frame rate, a speed-up. The README keeps none: it points to the pages
// whose figures carry their date, command and load.
func (p Page) DatedFigures() []int {
	var lines []int
	for i, l := range p.Prose {
		if datedFigure.MatchString(l) {
			lines = append(lines, i)
		}
	}
	return lines
}
