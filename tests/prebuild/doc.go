// Package prebuild starts the source tests' one cold kernel build as soon
// as go test ./... runs this package: beside the tests package, whose
// source tests (tests/source_test.go) then find the kernel built, instead
// of after twenty minutes of other tests. It has a test and nothing else.
package prebuild
