//go:build !linux

package httpstream

// writeNow is not available here: SendStaged reports false and the Post
// writes the byte.
func writeNow(uintptr, []byte) bool { return false }
