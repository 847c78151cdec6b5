package labfile

import "fmt"

// CheckLabName is the lab-name rule of lab files, for names given on the
// command line: a lab's name becomes part of namespace and file names, so a
// name such as ../../tmp/v must never reach them.
func CheckLabName(name string) error {
	if !labNameRE.MatchString(name) {
		return fmt.Errorf("lab name %q: use 1-24 lowercase letters, digits and '-', starting with a letter or digit, as in the lab file's name:", name)
	}
	return nil
}

// CheckNodeName is the node-name rule of lab files, for names given on the
// command line.
func CheckNodeName(name string) error {
	if !nameRE.MatchString(name) || len(name) > 24 {
		return fmt.Errorf("node name %q: use 1-24 lowercase letters, digits and '_', starting with a letter or digit, as in the lab file", name)
	}
	return nil
}
