//go:build race

package spanguardprocessor

// raceEnabled scales the largest tests down under the race detector, which
// makes them about ten times slower; the full sizes run without it.
const raceEnabled = true
