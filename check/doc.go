// Package check makes devbulk's measurements a regression check: a Suite
// of scenarios (benches of any kind, netns scenarios; some in a VM) is run
// several times, the Results are saved as a baseline, and a later run is
// compared with it benchmark by benchmark, as benchstat does — medians with
// confidence intervals and the Mann-Whitney U test from
// golang.org/x/perf/benchmath. A regression must be both significant and
// beyond a threshold. A Report prints as a table, KTAP (for kselftest
// runners) or the Go benchmark format (for benchstat).
package check
