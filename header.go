package devbulk

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// Header is what every devbulk result document starts with: which tool,
// which version, which kernel, how many CPUs, when.
type Header struct {
	Tool    string `json:"tool"`
	Version string `json:"version"`
	Kernel  string `json:"kernel"`
	CPUs    int    `json:"cpus"`
	Date    string `json:"date"`
}

// NewHeader describes this machine and run now.
func NewHeader() Header {
	var u unix.Utsname
	_ = unix.Uname(&u)
	return Header{Tool: "devbulk", Version: Version(), Kernel: unix.ByteSliceToString(u.Release[:]),
		CPUs: runtime.NumCPU(), Date: time.Now().UTC().Format(time.RFC3339)}
}
