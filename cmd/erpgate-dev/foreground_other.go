//go:build !linux

package main

// takeTerminal is a no-op where the terminal's foreground group cannot be
// set this way; there an interrupt also reaches go run, which then exits
// with status 1.
func takeTerminal() {}
