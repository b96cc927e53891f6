package devices

// Dummy is the classic bulk-unregister subject: no data, no lower device.
var Dummy = register(&Kind{Name: "dummy", KernelKiB: 45, Module: "dummy", Config: "CONFIG_DUMMY", LowerChoice: 1, ModuleParams: "numdummies=0"})
