"""npu-graph-skill: diagnose, explain and measure torch_npu graph mode (NPUGraph / ACLGraph).

The public functions live in `npu_graph_skill.api`; the CLI, the MCP server and the agent skill
only call those.
"""
__version__ = "0.1.0"
