package kernlog

import (
	"strconv"
	"strings"
)

// record is one /dev/kmsg record: "PRIO,SEQ,USEC,FLAGS;TEXT\n", then
// dictionary lines beginning with a space (not read).
type record struct {
	kernel bool  // the kernel's (facility 0), not a process's write to /dev/kmsg
	usec   int64 // since boot
	text   string
}

// parseRecord reads one record as read(2) on /dev/kmsg returns it; ok is
// false for what is not one.
func parseRecord(b []byte) (r record, ok bool) {
	s := string(b)
	head, text, found := strings.Cut(s, ";")
	if !found {
		return r, false
	}
	text, _, _ = strings.Cut(text, "\n")
	f := strings.Split(head, ",")
	if len(f) < 4 {
		return r, false
	}
	prio, err1 := strconv.Atoi(f[0])
	usec, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return r, false
	}
	return record{kernel: prio>>3 == 0, usec: usec, text: unescape(text)}, true
}

// unescape undoes /dev/kmsg's \xNN escapes of unprintable bytes (a tab in
// a call trace's line, a newline inside one printk).
func unescape(s string) string {
	if !strings.Contains(s, `\x`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) && s[i+1] == 'x' {
			if v, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
