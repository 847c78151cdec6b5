package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/atmlab/atmlab/kernel"
	"github.com/atmlab/atmlab/topologies"
)

// runHolder runs this command again, as a normal user, in a rootless lab's
// holder (its own user, mount and network namespaces; see
// kernel/rootless.go) and exits with the holder's exit code.
// labs are what the holder will build. It returns only on failure.
func runHolder(labs ...*topologies.Lab) error {
	code, err := kernel.RunHolder(os.Args[1:], labs...)
	if err != nil {
		return err
	}
	os.Exit(code)
	return nil
}

// asLabUser runs this command again as the normal user whose rootless lab
// is named lab, when root runs it and has no lab of that name (see
// kernel.UserLab), and exits with its exit code. It returns nil at once
// when there is no such lab.
func asLabUser(lab string) error {
	uid, gid, ok, err := kernel.UserLab(lab)
	if err != nil || !ok {
		return err
	}
	code, err := kernel.AsUser(uid, gid)
	if err != nil {
		return err
	}
	os.Exit(code)
	return nil
}

// userLabError says that root's command reaches user uid's rootless lab only
// as that user.
func userLabError(ok bool, uid int, lab string) error {
	if !ok {
		return nil
	}
	return fmt.Errorf("lab %s is uid %d's rootless lab: run this as that user, such as sudo -u '#%d' atmlab %s", lab, uid, uid, strings.Join(os.Args[1:], " "))
}
