"""The official torch_npu / PyTorch / CANN / Python compatibility table, as data, and lookups.

Source: Ascend/pytorch `COMPATIBILITY.en.md` at master 9e73e708ab93 (2026-08-21): the
"TorchNPU version mapping table" (lines 16-45, active) and its history (lines 50-87), and
"PyTorch and Python versions" (lines 91-108). The table names the *installation package* version
(`pip install torch-npu==2.7.1.post8`), the GitCode branch `v{PyTorch}-{release line}`, the
PyTorch version it was built for and the CANN version it was released with.
"""
from __future__ import annotations

import re
from typing import Dict, List, NamedTuple, Optional, Tuple

SOURCE = "Ascend/pytorch COMPATIBILITY.en.md:16-108@9e73e708ab93"
SOURCE_URL = "https://gitcode.com/Ascend/pytorch/blob/master/COMPATIBILITY.md"


class Release(NamedTuple):
    package: str  # torch-npu installation package version
    branch: str  # GitCode branch, v{torch}-{release line}
    torch: str
    cann: str

    @property
    def line(self) -> str:
        """The release line: "7.3.0" of "v2.9.0-7.3.0", "26.1.0" of "v2.12.0-26.1.0"."""
        return self.branch.rsplit("-", 1)[-1] if "-" in self.branch else self.branch


RELEASES: Tuple[Release, ...] = tuple(Release(*row) for row in (
    ("2.12.0", "v2.12.0-26.1.0", "2.12.0", "9.1.0"),
    ("2.11.0", "v2.11.0-26.1.0", "2.11.0", "9.1.0"),
    ("2.10.0.post4", "v2.10.0-26.1.0", "2.10.0", "9.1.0"),
    ("2.9.0.post6", "v2.9.0-26.1.0", "2.9.0", "9.1.0"),
    ("2.7.1.post8", "v2.7.1-26.1.0", "2.7.1", "9.1.0"),
    ("2.9.0.post2", "v2.9.0-26.0.0", "2.9.0", "9.0.0"),
    ("2.8.0.post4", "v2.8.0-26.0.0", "2.8.0", "9.0.0"),
    ("2.7.1.post4", "v2.7.1-26.0.0", "2.7.1", "9.0.0"),
    ("2.9.0", "v2.9.0-7.3.0", "2.9.0", "8.5.0"),
    ("2.8.0.post2", "v2.8.0-7.3.0", "2.8.0", "8.5.0"),
    ("2.7.1.post2", "v2.7.1-7.3.0", "2.7.1", "8.5.0"),
    ("2.6.0.post5", "v2.6.0-7.3.0", "2.6.0", "8.5.0"),
    ("2.8.0", "v2.8.0-7.2.0", "2.8.0", "8.3.RC1"),
    ("2.7.1", "v2.7.1-7.2.0", "2.7.1", "8.3.RC1"),
    ("2.6.0.post3", "v2.6.0-7.2.0", "2.6.0", "8.3.RC1"),
    ("2.1.0.post17", "v2.1.0-7.2.0", "2.1.0", "8.3.RC1"),
    ("2.6.0", "v2.6.0-7.1.0", "2.6.0", "8.2.RC1"),
    ("2.5.1.post1", "v2.5.1-7.1.0", "2.5.1", "8.2.RC1"),
    ("2.1.0.post13", "v2.1.0-7.1.0", "2.1.0", "8.2.RC1"),
    ("2.5.1", "v2.5.1-7.0.0", "2.5.1", "8.1.RC1"),
    ("2.4.0.post4", "v2.4.0-7.0.0", "2.4.0", "8.1.RC1"),
    ("2.3.1.post6", "v2.3.1-7.0.0", "2.3.1", "8.1.RC1"),
    ("2.1.0.post12", "v2.1.0-7.0.0", "2.1.0", "8.1.RC1"),
    ("2.4.0.post2", "v2.4.0-6.0.0", "2.4.0", "8.0.0"),
    ("2.3.1.post4", "v2.3.1-6.0.0", "2.3.1", "8.0.0"),
    ("2.1.0.post10", "v2.1.0-6.0.0", "2.1.0", "8.0.0"),
    ("2.4.0", "v2.4.0-6.0.rc3", "2.4.0", "8.0.RC3"),
    ("2.3.1.post2", "v2.3.1-6.0.rc3", "2.3.1", "8.0.RC3"),
    ("2.1.0.post8", "v2.1.0-6.0.rc3", "2.1.0", "8.0.RC3"),
    ("2.3.1", "v2.3.1-6.0.rc2", "2.3.1", "8.0.RC2"),
    ("2.2.0.post2", "v2.2.0-6.0.rc2", "2.2.0", "8.0.RC2"),
    ("2.1.0.post6", "v2.1.0-6.0.rc2", "2.1.0", "8.0.RC2"),
    ("1.11.0.post14", "v1.11.0-6.0.rc2", "1.11.0", "8.0.RC2"),
    ("2.2.0", "v2.2.0-6.0.rc1", "2.2.0", "8.0.RC1"),
    ("2.1.0.post4", "v2.1.0-6.0.rc1", "2.1.0", "8.0.RC1"),
    ("1.11.0.post11", "v1.11.0-6.0.rc1", "1.11.0", "8.0.RC1"),
    ("2.1.0", "v2.1.0-5.0.0", "2.1.0", "7.0.0"),
    ("2.0.1.post1", "v2.0.1-5.0.0", "2.0.1", "7.0.0"),
    ("1.11.0.post8", "v1.11.0-5.0.0", "1.11.0", "7.0.0"),
    ("2.1.0.rc1", "v2.1.0-5.0.rc3", "2.1.0", "7.0.RC1"),
    ("2.0.1", "v2.0.1-5.0.rc3", "2.0.1", "7.0.RC1"),
    ("1.11.0.post4", "v1.11.0-5.0.rc3", "1.11.0", "7.0.RC1"),
    ("1.11.0.post3", "v1.11.0-5.0.rc2.2", "1.11.0", "6.3.RC3.1"),
    ("1.11.0.post2", "v1.11.0-5.0.rc2.1", "1.11.0", "6.3.RC3"),
    ("2.0.1.rc1", "v2.0.1-5.0.rc2", "2.0.1", "6.3.RC2"),
    ("1.11.0.post1", "v1.11.0-5.0.rc2", "1.11.0", "6.3.RC2"),
    ("1.8.1.post2", "v1.8.1-5.0.rc2", "1.8.1", "6.3.RC2"),
    ("1.11.0", "v1.11.0-5.0.rc1", "1.11.0", "6.3.RC1"),
    ("1.8.1.post1", "v1.8.1-5.0.rc1", "1.8.1", "6.3.RC1"),
    ("1.5.0.post8", "v1.5.0-3.0.0", "1.5.0", "6.0.1"),
    ("1.8.1", "v1.8.1-3.0.0", "1.8.1", "6.0.1"),
    ("1.11.0.rc2", "v1.11.0-3.0.0", "1.11.0", "6.0.1"),
    ("1.5.0.post7", "v1.5.0-3.0.rc3", "1.5.0", "6.0.RC1"),
    ("1.8.1.rc3", "v1.8.1-3.0.rc3", "1.8.1", "6.0.RC1"),
    ("1.11.0.rc1", "v1.11.0-3.0.rc3", "1.11.0", "6.0.RC1"),
    ("1.5.0.post6", "v1.5.0-3.0.rc2", "1.5.0", "5.1.RC2"),
    ("1.8.1.rc2", "v1.8.1-3.0.rc2", "1.8.1", "5.1.RC2"),
    ("1.5.0.post5", "v1.5.0-3.0.rc1", "1.5.0", "5.1.RC1"),
    ("1.8.1.rc1", "v1.8.1-3.0.rc1", "1.8.1", "5.1.RC1"),
    ("1.5.0.post4", "2.0.4.tr5", "1.5.0", "5.0.4"),
    ("1.5.0.post3", "2.0.3.tr5", "1.8.1", "5.0.3"),
    ("1.5.0.post2", "2.0.2.tr5", "1.5.0", "5.0.2"),
))

# PyTorch version -> Python minor versions it supports (COMPATIBILITY.en.md:91-108).
PYTHON_FOR_TORCH: Dict[str, Tuple[str, ...]] = {
    "2.13.0": ("3.10", "3.11", "3.12", "3.13", "3.14"),
    "2.12.0": ("3.10", "3.11", "3.12", "3.13", "3.14"),
    "2.11.0": ("3.10", "3.11", "3.12", "3.13", "3.14"),
    "2.10.0": ("3.10", "3.11", "3.12", "3.13"),
    "2.9.0": ("3.10", "3.11", "3.12", "3.13"),
    "2.8.0": ("3.9", "3.10", "3.11", "3.12", "3.13"),
    "2.7.1": ("3.9", "3.10", "3.11", "3.12", "3.13"),
    "2.6.0": ("3.9", "3.10", "3.11"),
    "2.5.1": ("3.9", "3.10", "3.11"),
    "2.4.0": ("3.8", "3.9", "3.10", "3.11"),
    "2.3.1": ("3.8", "3.9", "3.10", "3.11"),
    "2.2.0": ("3.8", "3.9", "3.10"),
    "2.1.0": ("3.8", "3.9", "3.10", "3.11"),
    "1.11.0": ("3.7", "3.8", "3.9", "3.10"),
}


def base_version(version: str) -> str:
    """"2.7.1.post8" / "2.13.0+cpu" / "2.13.0rc1" / "2.1.0.rc1" -> "2.7.1", "2.13.0", "2.13.0", "2.1.0"."""
    match = re.match(r"\s*(\d+)\.(\d+)(?:\.(\d+))?", version or "")
    if not match:
        return ""
    return ".".join(part or "0" for part in match.groups())


def version_key(version: str) -> Tuple[int, ...]:
    """Numeric parts for ordering: "26.1.0" -> (26, 1, 0); "8.3.RC1" -> (8, 3)."""
    parts: List[int] = []
    for piece in re.split(r"[.\-+]", version or ""):
        if not piece.isdigit():
            break
        parts.append(int(piece))
    return tuple(parts)


def find_release(torch_npu_version: str) -> Optional[Release]:
    """The table row of an installed torch-npu package version (local suffixes ignored)."""
    wanted = (torch_npu_version or "").split("+", 1)[0].strip()
    for release in RELEASES:
        if release.package == wanted:
            return release
    return None


def releases_for_torch(torch_version: str) -> List[Release]:
    base = base_version(torch_version)
    return [r for r in RELEASES if r.torch == base]


def newest_release() -> Release:
    return max(RELEASES, key=lambda r: version_key(r.torch))


def same_cann(expected: str, found: str) -> bool:
    """"9.1.0" vs "9.1.0" / "8.3.RC1" vs "8.3.rc1": equal when normalised."""
    def norm(text: str) -> str:
        return re.sub(r"\s+", "", (text or "").upper().replace("CANN", ""))

    return bool(expected and found) and (norm(found) == norm(expected) or norm(found).startswith(norm(expected) + "."))


def python_supported(torch_version: str, python_version: str) -> Optional[bool]:
    """None when the table does not list that PyTorch version."""
    supported = PYTHON_FOR_TORCH.get(base_version(torch_version))
    if supported is None:
        return None
    return ".".join(python_version.split(".")[:2]) in supported
