//go:build !race

package spanguardprocessor

const raceEnabled = false
