// Package tests holds devbulk's integration tests: they run against the real
// kernel, in throwaway network namespaces (never the host's), and need root.
// Run them with `go test ./tests/` as root; without CAP_NET_ADMIN they skip.
package tests
