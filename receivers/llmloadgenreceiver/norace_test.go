//go:build !race

package llmloadgenreceiver

const raceEnabled = false
