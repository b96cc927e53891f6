package devices

// Ifb (intermediate functional block) is as cheap as dummy and built into
// many kernels that lack dummy.
var Ifb = register(&Kind{Name: "ifb", KernelKiB: 42, Module: "ifb", Config: "CONFIG_IFB", LowerChoice: 2, ModuleParams: "numifbs=0"})
