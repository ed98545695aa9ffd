// Package otelcolllm holds what the whole distribution shares at its root: the
// configurations that ship inside the binary.
package otelcolllm

import "embed"

// Configs holds the pipeline configurations under configs/. They are
// the configurations the project tests end to end and the ones the binary
// serves through the builtin confmap provider ("builtin:<name>").
//
//go:embed configs/*.yaml
var Configs embed.FS

// ConfigDir is the folder of Configs that holds the YAML files.
const ConfigDir = "configs"
