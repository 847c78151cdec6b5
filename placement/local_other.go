//go:build !linux

package placement

import (
	"errors"
	"io"
)

var errNoLocal = errors.New("the local engine needs Linux (network namespaces and a veth): place the lab on slurm or kubernetes")

func newLocal(Split, io.Writer) (runner, error) { return nil, errNoLocal }

func downLocal(Split, io.Writer) error { return errNoLocal }
