// Package crosscheck type-checks the command for macOS and Windows from
// source: what a cross-build proves of atmlab's own code (every file the
// build tags keep for that system compiles against its APIs), without
// compiling the standard library and the dependencies for it twice more.
package crosscheck
