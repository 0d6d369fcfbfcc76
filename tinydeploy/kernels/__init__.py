"""The `select` stage: kernel variants, the single table of supported ops, and the host
harness that runs the C kernels against the oracle.

* `registry`: the dataclasses of docs/interfaces.md, `register`, `select_kernels`,
  `SUPPORTED_OPS`; op modules listed in `registry.VARIANT_MODULES` register on import;
* `common`: TFLite's Prepare-time rules (padding, activation ranges, per-channel
  multipliers) shared by the op modules;
* one module per op family (`conv`, `depthwise`, `fully_connected`, `pooling`, `softmax`,
  `reshape`, ...), each with `accepts` (static checks only) and `prepare` (all Prepare work,
  returning a `KernelCall`);
* `harness`: compiles the selected C kernels for the host with sanitizers and runs graphs.

Importing this package is cheap; op modules load on the first registry query.
"""
