package labyaml

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Document reads data as one YAML document and returns its top node, nil
// for an empty file. Bytes that are not UTF-8 (nor UTF-16 with its byte
// order mark) and YAML's own errors come back as an *Error at their line
// under the key "yaml"; so does a second document, with the message second.
func Document(file string, data []byte, second string) (*yaml.Node, error) {
	if !utf8.Valid(data) && !bytes.HasPrefix(data, []byte{0xfe, 0xff}) && !bytes.HasPrefix(data, []byte{0xff, 0xfe}) {
		bad := 0
		for bad < len(data) {
			r, n := utf8.DecodeRune(data[bad:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			bad += n
		}
		return nil, &Error{File: file, Line: 1 + bytes.Count(data[:bad], []byte("\n")), Key: "yaml",
			Msg: fmt.Sprintf("byte 0x%02x at column %d is not UTF-8: save the file as UTF-8", data[bad], bad-bytes.LastIndexByte(data[:bad], '\n'))}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil && err != io.EOF {
		return nil, yamlError(file, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		line := extra.Line
		if len(extra.Content) > 0 {
			line = extra.Content[0].Line
		}
		return nil, &Error{File: file, Line: line, Key: "yaml", Msg: second}
	case err != io.EOF:
		return nil, yamlError(file, err)
	}
	if len(root.Content) == 0 {
		return nil, nil
	}
	return root.Content[0], nil
}

var lineRE = regexp.MustCompile(`line (\d+)`)

// yamlError is the YAML library's error at the line it names (1 if none).
func yamlError(file string, err error) error {
	line := 1
	if m := lineRE.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
	}
	return &Error{File: file, Line: line, Key: "yaml", Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
}
