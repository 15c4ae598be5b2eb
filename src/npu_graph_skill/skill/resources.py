"""Read the files shipped inside `npu_graph_skill.skill` (routing table, templates).

`pkgutil.get_data` works from a plain install, an editable checkout and a zipapp alike.
"""
from __future__ import annotations

import pkgutil


def read_resource(name: str) -> str:
    """`name` is relative to this package, with forward slashes: `templates/SKILL.md`."""
    data = pkgutil.get_data("npu_graph_skill.skill", name)
    if data is None:  # only when the package has no loader, which an install never lacks
        raise FileNotFoundError(name)
    return data.decode("utf-8")
