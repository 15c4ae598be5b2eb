"""Error-code lookup: whatever form a user pastes, the entries it can mean.

Accepted forms: decimal ACL/runtime/GE/aclnn codes (`107027`), their hex (`0x1a213`), runtime
internal codes from plogs (`0x7020023`, `InnerCode=0x0703001c`), CANN E-codes (`EE1016`,
`EZ9999`), torch_npu codes (`ERR00100`), HCCL results and driver codes (small integers — several
families share them, so all are returned).
"""
from __future__ import annotations

import dataclasses
import re
from typing import List, Optional

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.core.model import Record
from npu_graph_skill.knowledge.loader import CodeEntry, load_knowledge

MAX_CODE_CHARS = 64  # longer than any code with its label ("InnerCode=0x0703001c"): not a code
ECODE = re.compile(r"^[EW][0-9A-Z]\d{4}$")
PTA = re.compile(r"^ERR\d{5}$")
HEX = re.compile(r"^0X[0-9A-F]+$")
INNER_MIN, INNER_MAX = 0x07000000, 0x07FFFFFF


@dataclasses.dataclass
class CodeLookup(Record):
    query: str
    normalized: str
    entries: List[CodeEntry]
    note: str = ""


def normalize(code: str) -> str:
    """`'  0x1A213 '` → `'107027'`, `'ee1016'` → `'EE1016'`, `'InnerCode=0x703001c'` → `'0x703001c'`."""
    text = str(code).strip().strip(",.;:()[]'\"")
    if len(text) > MAX_CODE_CHARS:
        raise UserError(f"{text[:40]!r}... is not an error code (try 107027, 0x1a213, EE1016, ERR00100 or 0x7020023)")
    text = re.sub(r"^(innercode|retcode|errcode|error code is|code)\s*(?:[=:]\s*)?", "", text, flags=re.IGNORECASE)
    upper = text.upper()
    if ECODE.match(upper) or PTA.match(upper):
        return upper
    if HEX.match(upper):
        value = int(upper, 16)
        return "0x%x" % value if INNER_MIN <= value <= INNER_MAX else str(value)
    if upper.isdecimal():  # not isdigit(): '²' is a digit that int() refuses
        return str(int(upper))
    raise UserError(f"{str(code).strip()!r} is not an error code (try 107027, 0x1a213, EE1016, ERR00100 or 0x7020023)")


def lookup(code: str) -> CodeLookup:
    key = normalize(code)
    knowledge = load_knowledge()
    entries = knowledge.codes_for(key)
    note = ""
    if not entries and key.startswith("0x"):
        note = "a runtime-internal code (0x07xxxxxx) not in the table; the plog line that carries it also names the public code"
    elif not entries:
        note = "not a known ACL/CANN/torch_npu code"
    if key == "1048576":
        note = ("0x100000 is not an error code (the design brief's 'MODEL_EXECUTE_FAILED' does not exist); "
                "a failed replay is 507011 ACL_ERROR_RT_MODEL_EXECUTE")
    elif key == "1048579":
        note = ("0x100003 is not an error code (the design brief's 'STREAM_CONTEXT'); 107003 is "
                "ACL_ERROR_RT_STREAM_CONTEXT (stream of another context); capture/replay mismatches are 107036/107038/107025")
    return CodeLookup(query=str(code), normalized=key, entries=entries, note=note)


def describe(code: str) -> Optional[CodeEntry]:
    """The most specific entry for a code seen in evidence, or None (never raises)."""
    try:
        entries = lookup(code).entries
    except UserError:
        return None
    return entries[0] if entries else None
