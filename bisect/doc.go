// Package bisect finds the kernel configuration where a teardown's time
// changed: over an ordered list of configurations, the first known good
// and the last known bad, it measures both ends side by side, then
// searches, deciding each step against both ends (the U test on every
// sample of a boot, never one sample, and the threshold), and confirms the answer by measuring the
// last good and first bad kernels again. Every boot is logged, so that a
// bisection stopped (Ctrl-C, kill -9) resumes where it was.
//
// The measurement is the caller's (Measurer): devbulk boots each kernel in
// its VM and runs one scenario of a check suite there (cmd/devbulk).
package bisect
