// Package wireshark holds what atmlab ships for Wireshark: the Lua
// dissector that decodes AAL3/4 cell captures, which Wireshark itself
// cannot (its ERF cell records carry no AAL).
package wireshark

import (
	_ "embed"
	"os"
)

// AAL34 is aal34.lua: load it with `tshark -X lua_script:aal34.lua`.
//
//go:embed aal34.lua
var AAL34 []byte

// AAL34Description starts the pcapng interface description of an AAL3/4
// link's capture; the dissector decodes the cells of such interfaces only.
const AAL34Description = "atmlab aal34"

// WriteDissector writes aal34.lua to path, for `atmlab capture
// --lua-dissector`.
func WriteDissector(path string) error { return os.WriteFile(path, AAL34, 0o644) }
