"""stream: a model that slides over time, turned into steps that compute only what is new.

`analysis` finds the time axis, each layer's receptive field, stride and padding along it,
and the op that reduces time; `schedule` turns that into a step schedule (per step and op
the rows to compute, the buffers kept across steps). Plain frozen data, no C: `plan` places
the buffers and `codegen` renders the step function from it.
"""
