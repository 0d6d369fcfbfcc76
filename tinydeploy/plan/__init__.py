"""The plan stage: tensor lifetimes -> a static arena layout, and the RAM/flash budget."""

from tinydeploy.plan.arena import (
    ALGORITHMS,
    ArenaPlan,
    Buffer,
    Placement,
    Trial,
    live_bytes,
    lower_bound,
    plan_arena,
    verify_plan,
)
from tinydeploy.plan.lifetimes import GraphPlan, buffers_from_graph, plan_graph

__all__ = [
    "ALGORITHMS", "ArenaPlan", "Buffer", "GraphPlan", "Placement", "Trial",
    "buffers_from_graph", "live_bytes", "lower_bound", "plan_arena", "plan_graph",
    "verify_plan",
]
