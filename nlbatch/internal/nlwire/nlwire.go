// Package nlwire holds the netlink encoding helpers that nlbatch and its
// fake kernel (nlbatchtest) both need.
package nlwire

import (
	"encoding/binary"
	"slices"

	"golang.org/x/sys/unix"
)

// Align4 rounds n up to netlink's 4-byte alignment.
func Align4(n int) int { return (n + 3) &^ 3 }

// ForEachAttr walks a run of netlink attributes, stopping at the first
// malformed one. The type has the NESTED and NET_BYTEORDER bits cleared.
func ForEachAttr(b []byte, fn func(typ uint16, value []byte)) {
	for len(b) >= unix.SizeofRtAttr {
		l := int(binary.NativeEndian.Uint16(b[0:2]))
		typ := binary.NativeEndian.Uint16(b[2:4]) &^ (unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER)
		if l < unix.SizeofRtAttr || l > len(b) {
			return
		}
		fn(typ, b[unix.SizeofRtAttr:l])
		next := Align4(l)
		if next > len(b) {
			return
		}
		b = b[next:]
	}
}

// CString is the string in b up to its first NUL.
func CString(b []byte) string {
	if i := slices.Index(b, 0); i >= 0 {
		return string(b[:i])
	}
	return string(b)
}
