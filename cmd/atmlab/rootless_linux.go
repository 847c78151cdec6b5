//go:build linux && !atmlab_stub

package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/atmlab/atmlab/kernel"
)

// asLabUser runs this command again as the normal user whose rootless lab
// is named lab, when root runs it and has no lab of that name (see
// kernel.UserLab), and exits with its exit code. It returns nil at once
// when there is no such lab.
func asLabUser(lab string) error {
	uid, gid, dir, ok, err := kernel.UserLab(lab)
	if err != nil || !ok {
		return err
	}
	code, err := kernel.AsUser(uid, gid, dir)
	if err != nil {
		return err
	}
	os.Exit(code)
	return nil
}

// refuseUserLab refuses root's command on user uid's rootless lab named
// lab, which it reaches only as that user.
func refuseUserLab(lab string) error {
	if uid, _, _, ok, err := kernel.UserLab(lab); err != nil || ok {
		return errors.Join(err, userLabError(ok, uid, lab))
	}
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
