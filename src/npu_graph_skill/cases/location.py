"""Which folder is the knowledge base: `--kb DIR`, then $NPU_GRAPH_KB, then the installed skill's
`knowledge/` in the current project (or a parent of it), then the user's data folder."""
from __future__ import annotations

import dataclasses
import os
from typing import Dict, Optional

from npu_graph_skill.core.model import Record

ENV_VAR = "NPU_GRAPH_KB"
SKILL_NAME = "npu-graph-skill"
# Project-level skill folders of the agents the skill installs into.
AGENT_DIRS = (".claude", ".trae", ".codex", ".cursor", ".opencode", ".agents")


@dataclasses.dataclass
class KbLocation(Record):
    """The knowledge-base folder and where its name came from; the layout inside it:

    cases/<id>.yaml                 one file per distinct case, written once
    occurrences/<id>.<time>-<h>.yaml one file per repeat of a case (its environment, date, reporter)
    proposals/<pattern id>.yaml     pattern stubs from novel cases
    history.md, CASE_TEMPLATE.md    generated
    .lock, .index.json              local (git-ignored): the writers' lock and a cache of case summaries

    Every record adds exactly one new file under a unique name, so two people's additions merge
    in git without conflict; the counts are derived from the files, never stored in one.
    """

    path: str
    source: str  # option | env | skill | user

    def sub(self, *parts: str) -> str:
        return os.path.join(self.path, *parts)

    @property
    def cases_dir(self) -> str:
        return self.sub("cases")

    @property
    def occurrences_dir(self) -> str:
        return self.sub("occurrences")

    @property
    def proposals_dir(self) -> str:
        return self.sub("proposals")

    @property
    def history_file(self) -> str:
        return self.sub("history.md")

    @property
    def template_file(self) -> str:
        return self.sub("CASE_TEMPLATE.md")

    @property
    def lock_file(self) -> str:
        return self.sub(".lock")

    @property
    def index_file(self) -> str:
        return self.sub(".index.json")


def resolve_kb_dir(kb_dir: Optional[str] = None, cwd: Optional[str] = None,
                   environ: Optional[Dict[str, str]] = None) -> KbLocation:
    env = os.environ if environ is None else environ
    if kb_dir:
        return KbLocation(os.path.abspath(os.path.expanduser(kb_dir)), "option")
    if env.get(ENV_VAR):
        return KbLocation(os.path.abspath(os.path.expanduser(env[ENV_VAR])), "env")
    found = find_skill_knowledge(cwd or os.getcwd())
    if found:
        return KbLocation(found, "skill")
    data_home = env.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return KbLocation(os.path.join(data_home, SKILL_NAME, "kb"), "user")


def find_skill_knowledge(start: str) -> Optional[str]:
    """`<dir>/.claude/skills/npu-graph-skill/knowledge` (or another agent's) in `start` or the
    nearest parent holding an installed skill; the walk stops at the repository root."""
    current = os.path.abspath(start)
    while True:
        for agent in AGENT_DIRS:
            skill = os.path.join(current, agent, "skills", SKILL_NAME)
            if os.path.isdir(skill):
                return os.path.join(skill, "knowledge")
        parent = os.path.dirname(current)
        if parent == current or os.path.exists(os.path.join(current, ".git")):
            return None
        current = parent


def has_cases(kb_dir: Optional[str] = None) -> bool:
    """Whether there is a knowledge base with a cases/ folder to consult: a few stat calls, so a
    diagnosis can skip importing the search when there is nothing to search."""
    return os.path.isdir(resolve_kb_dir(kb_dir).cases_dir)
