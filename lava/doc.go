// Package lava puts devbulk's checks into the fleets that test kernels
// (KernelCI, LKFT: LAVA, the dispatcher that boots a kernel on a device and
// records each test case's result and measurement) and reads their answers
// back.
//
// The job side: Artifacts writes what a job deploys (the kernel image and
// one cpio.gz ramdisk holding a static devbulk, busybox, the modules the
// suite needs, the suite and its baseline); Job is the job definition for a
// plain device_type qemu device, whose test definition runs `devbulk check
// --here --format lava` in the guest. That format (WriteCases) reports each
// scenario as a LAVA test case, each repetition of its headline benchmark
// as a sample case, the check as a whole as one more, and the whole results
// document on the console (EncodeResults).
//
// The reading side: Read reads the log lava-run writes and the results
// export of a LAVA server (lavacli results JOB --yaml) into a check's
// results document, so that a fleet's run prints as any saved run, becomes
// a baseline, and several make a kernel matrix.
package lava
