package lava

import (
	"fmt"
	"io"
)

// deviceTemplate is a qemu device dictionary as lava-server renders its
// qemu.jinja2 for an amd64 worker (the parts lava-dispatcher reads): the
// accelerator's options and the memory are filled in.
const deviceTemplate = `# A qemu device for devbulk lava run, as a fleet's qemu worker has it (%[1]s).
character_delays:
  boot: 0
  test: 0
constants:
  posix:
    lava_test_sh_cmd: /bin/sh
    lava_test_results_dir: /lava-%%s
    lava_test_shell_file: ~/.bashrc
  kernel-start-message: Linux version [0-9]
  shutdown-message: The system is going down for reboot NOW
  default-shell-prompt: 'lava-test: # '
  spawn_maxread: 4092
  failure_retry: 1
  boot_retry: 1
  interrupt-prompt: Hit any key to stop autoboot
  interrupt-character: ' '
parameters:
  pass:
available_architectures:
- amd64
- x86_64
actions:
  deploy:
    methods:
      tmpfs: null
      image:
        parameters:
          guest:
            size: 512
            interface: ide
  boot:
    connections:
      serial: null
    methods:
      qemu:
        parameters:
          command: qemu-system-x86_64
          boot_options:
            root: /dev/ram0
            console: ttyS0,115200
          options:
          - -cpu %[2]s
          - -machine q35
          - -nographic
          - -nic none
          - -m %[3]d
          - -smp 2
          - -monitor none
          extra:
          - -accel %[1]s
timeouts:
  actions:
    apply-overlay-image:
      minutes: 2
    auto-login-action:
      minutes: 5
    lava-test-shell:
      minutes: 80
  connections:
    lava-test-shell:
      minutes: 5
`

// WriteDevice writes a qemu device dictionary: accel kvm (the host's CPU)
// or tcg (qemu64), memMiB of memory, 2 CPUs.
func WriteDevice(w io.Writer, accel string, memMiB int) error {
	cpu := "qemu64"
	if accel == "kvm" {
		cpu = "host"
	}
	_, err := fmt.Fprintf(w, deviceTemplate, accel, cpu, memMiB)
	return err
}
