"""The fixed-point helpers moved to `tinydeploy.fixedpoint` (below the kernels, which use
them); this name re-exports them for code written against the old place. New code imports
`tinydeploy.fixedpoint`: a kernel module importing this one is an upward import."""

from tinydeploy.fixedpoint import *  # noqa: F403
