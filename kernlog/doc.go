// Package kernlog watches the kernel's log while devbulk runs and reports
// the kernel's complaints as findings: each WARN, BUG, Oops, lockdep or
// KASAN report, RCU stall, soft lockup, hung task, "waiting for … to
// become free", ref_tracker stack and panic, with the phase it happened in
// and the kernel's text trimmed to what a maintainer reads (the report's
// lines and its call trace, without the register dump).
//
// It reads /dev/kmsg, which has every record at every level: the console a
// VM boots with `quiet` shows only errors, and a WARN is a warning. A
// Watcher starts at the log's end (what came before is not this run's),
// stamps each record with the phase under way when it was read, and groups
// a report's records into one Finding.
//
// A complaint the kernel prints in a run is never dropped silently: only a
// pattern of the Noise list (its text is the user's to read and change,
// docs/findings.md) filters one, and the summary counts what it filtered.
package kernlog
