"""Test support, kept out of the stages: the host kernel harness (`harness`), the flatbuffer
model writer for single-op test models (`builder`, needs the ``flatbuffers`` package of the
dev extra), the front end's QEMU harness (`frontend_target`, with its C in
``frontend_harness/``) and the oracle probes (`probes`).

Nothing in the product imports this package; it may import every stage (it sits on top).
"""
