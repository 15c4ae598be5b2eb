"""One physical log line → `ParsedLine`: which layout printed it, and its level, time, module, pid,
rank, source location and message.

Every layout below is described, with real example lines and their sources, in
`shared/reference/formats.md` (§ numbers in the comments point there):

* ``plog``      CANN host/device app log (§2.2): ``[LEVEL] MODULE(pid,pname):YYYY-MM-DD-HH:MM:SS.mmm.uuu [file:line]tid Func:msg``,
                with the HCCL (``[file:line] [tid]``), TDT (``[file:line][Func][tid:N]``), TORCHAIR and torch_npu ``APP`` ``"[PTA]:"`` variants (§2.4).
* ``npu_g1``    TORCH_NPU_LOGS C++ layout of 7.0/7.1: ``[rank:R]:[YYYY-MM-DD HH:MM:SS:mmm] logger: [LEVEL] msg`` (§1.3).
* ``npu_g2``    7.2–26.0: ``[rank:R]:[pid] [YYYY-MM-DD HH:MM:SS:mmm] logger: [LEVEL] [tid] msg`` (§1.3).
* ``npu_g3``    master/26.1 glog-like: ``LMMDD HH:MM:SS.uuuuuu pid file.cpp:line] [rank:R] msg`` (§1.3).
* ``torch_py``  torch's TorchLogsFormatter: ``[rankR]:LMMDD HH:MM:SS.uuuuuu pid path.py:line] [trace] [__artifact] msg`` (§1.4).
* ``c10_warn``  ``[W1210 03:09:10.966659833 file:line] Warning: msg (function f)`` and the older ``[W file:line]`` (§1.6).
* ``pta_error`` ``[ERROR] 2025-04-29-18:46:11 (PID:.., Device:.., RankID:..) ERR00100 PTA ...`` and the ``[Error]: <meaning>``
                line under it (§3.1).
* ``cann_ecode`` CANN error-message headers inside stdout: ``EE9999: Inner Error!``, ``EE9999[PID: n] <ts> (EE9999): msg``,
                ``EL0004: [PID: n] <ts> msg``, ``[PID: n] <ts> Title(EL0009): msg`` (§2.5, §3.2).
* ``exception`` a Python exception line ``RuntimeError: ...`` / ``torch.OutOfMemoryError: ...``.
* ``vllm``      vLLM ``LEVEL MM-DD HH:MM:SS [file:line] msg`` (§5) and SGLang ``[YYYY-MM-DD HH:MM:SS TP0] msg``
                (sglang ``configure_logger``: ``format=f"[%(asctime)s{prefix}] %(message)s"``, python/sglang/srt/utils/common.py).
* ``text``      anything else, kept verbatim (a ``[FUNC:..][FILE:..][LINE:..]`` tail still fills func/file/line).

Worker and grep prefixes — ``(Worker_TP1 pid=29932) ``, ``[rank0]: ``, ``plog-1_2.log:`` — are peeled off first, in any
combination, and kept in ``prefix``. When a vLLM header wraps a line of another layout (a torch_npu error block logged by
``multiproc_executor.py``), the inner layout wins and the header joins the prefix.

Speed matters (this is the hot path of a 200 MB scan): dispatch is on the first character, a regex runs only for the
layout that character allows, and dates are converted with a cached day table instead of `datetime`. Every repetition
is bounded, so a hostile line (a 64 KB run of digits, brackets or colons) costs time linear in its length, and no
number a regex captures is too long for `int()`.
"""
from __future__ import annotations

import dataclasses
import os
import re
import time as _time
from typing import Dict, List, NamedTuple, Optional, Tuple

from npu_graph_skill.core.model import Record

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL", "EVENT", "TRACE")
# One-letter levels of glog (torch_npu G3), torch's formatter and c10 warnings.
SHORT_LEVELS = {"V": "DEBUG", "D": "DEBUG", "I": "INFO", "W": "WARNING", "E": "ERROR", "F": "CRITICAL", "C": "CRITICAL"}
_LEVEL_WORDS = {"DEBUG": "DEBUG", "INFO": "INFO", "WARNING": "WARNING", "WARN": "WARNING", "ERROR": "ERROR",
                "CRITICAL": "CRITICAL", "FATAL": "CRITICAL", "EVENT": "EVENT", "TRACE": "TRACE"}

# Year assumed for layouts that print none (vLLM, glog, c10); callers pass the run's year when they know it.
DEFAULT_YEAR = _time.localtime().tm_year


@dataclasses.dataclass
class ParsedLine(Record):
    """One physical line, split into the fields its layout carries ('' / None / 0 where it carries none)."""

    format: str
    level: str = ""
    time: str = ""
    timestamp: Optional[float] = None  # seconds on a naive local clock; comparable across the lines of one run
    module: str = ""
    pid: str = ""
    tid: str = ""
    rank: Optional[int] = None
    file: str = ""
    line: int = 0
    func: str = ""
    message: str = ""
    prefix: str = ""
    device: Optional[int] = None  # device id where the layout prints one (pta_error `Device:N`)

    def codes(self) -> List["CodeHit"]:
        """The error codes mentioned in the message, normalised (see `extract_codes`)."""
        return extract_codes(self.message)


# --------------------------------------------------------------------------------------------
# Time: "naive local" seconds from a cached day number (datetime.strptime is ~20x slower).
# --------------------------------------------------------------------------------------------

_DAY_CACHE: Dict[Tuple[int, int, int], int] = {}


def _days(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil)."""
    key = (year, month, day)
    cached = _DAY_CACHE.get(key)
    if cached is not None:
        return cached
    y = year - (1 if month <= 2 else 0)
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    value = era * 146097 + doe - 719468
    if len(_DAY_CACHE) < 4096:
        _DAY_CACHE[key] = value
    return value


def make_timestamp(year: int, month: int, day: int, hour: int, minute: int, second: int, fraction: float = 0.0) -> Optional[float]:
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and second < 62):
        return None
    return _days(year, month, day) * 86400.0 + hour * 3600 + minute * 60 + second + fraction


def parse_time(text: str, year: Optional[int] = None) -> Optional[float]:
    """Any of the printed time forms → seconds (for --since/--until). None when not recognised."""
    text = text.strip()
    match = _ANY_TIME_RE.match(text)
    if not match:
        return None
    y, mo, d, h, mi, s, frac = match.groups()
    fraction = float("0." + re.sub(r"\D", "", frac)) if frac else 0.0
    return make_timestamp(int(y) if y else (year or DEFAULT_YEAR), int(mo), int(d), int(h), int(mi), int(s), fraction)


_ANY_TIME_RE = re.compile(
    r"(?:(\d{4})[-/])?(\d{1,2})[-/](\d{1,2})[-T ](\d{1,2}):(\d\d):(\d\d)(?:[.:,](\d{1,3}(?:\.\d{1,3})?|\d{4,9}))?$")


# --------------------------------------------------------------------------------------------
# Prefixes added by launchers, grep and vLLM's logger.
# --------------------------------------------------------------------------------------------

# vLLM multiprocessing workers: "(Worker_TP1 pid=29932) ", "(EngineCore_DP0 pid=1) ", "(VllmWorker TP2 pid=102322) ",
# Ray actors "(RayWorkerWrapper pid=1, ip=10.0.0.1) ".
_WORKER_RE = re.compile(r"\(([A-Za-z][\w .:=-]{0,60}?) pid=(\d{1,12})(?:, ip=[\w.:]{1,100})?\) ?")  # also older vLLM's "(VllmWorker rank=0 pid=1)"
# torchrun / torch.distributed: "[rank0]: ", "[rank0]:[W...", torchrun --tee "[default0]:".
_RANK_PREFIX_RE = re.compile(r"\[(?:rank|default)(\d{1,6})\]: ?")
# grep over several files (or -H): "path/plog-73550_20260524094240186.log:" optionally with -n "…log:12:".
_GREP_RE = re.compile(r"(?<![\w./~+@-])[\w./~+@-]{0,400}?\.(?:log|txt|out|err|gz)(?:\.\d{1,6})?:(?:\d{1,12}:)?(?=\S)")
_GREP_HINT_RE = re.compile(r"\.(?:log|txt|out|err|gz)(?:\.\d+)?:")
_VLLM_RE = re.compile(r"(DEBUG|INFO|WARNING|ERROR|CRITICAL) (\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.\d{1,9})? \[([^\]:]{1,300}):(\d{1,9})\] ?")
_SGLANG_RE = re.compile(r"\[(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)((?: [A-Z]{2,4}\d{1,6}){0,8})\] ")
_TP_RE = re.compile(r"TP ?(\d{1,6})")


def strip_prefixes(text: str) -> Tuple[str, str]:
    """(prefix, body): removes worker/process prefixes, `[rank0]: `, grep's `file.log:` and vLLM
    `ERROR 08-05 11:23:25 [core.py:632] ` headers — repeatedly, in any combination."""
    prefix_end = 0
    while True:
        step = _prefix_step(text, prefix_end)
        if not step:
            break
        prefix_end = step
    return text[:prefix_end], text[prefix_end:]


def _prefix_step(text: str, pos: int) -> int:
    """End of one recognised prefix at `pos`, or 0."""
    if pos >= len(text):
        return 0
    first = text[pos]
    if first == "(":
        match = _WORKER_RE.match(text, pos)
        return match.end() if match else 0
    if first == "[":
        if text.startswith("[rank", pos) or text.startswith("[default", pos):
            match = _RANK_PREFIX_RE.match(text, pos)
            return match.end() if match else 0
        return 0
    if first in "DIWEC":
        match = _VLLM_RE.match(text, pos)
        if match:
            return match.end()
    if _GREP_HINT_RE.search(text, pos, pos + 400):
        match = _GREP_RE.match(text, pos)
        if match and match.end() > pos:
            return match.end()
    return 0


# --------------------------------------------------------------------------------------------
# The layouts.
# --------------------------------------------------------------------------------------------

_PLOG_RE = re.compile(
    r"\[(ERROR|WARNING|WARN|INFO|DEBUG|EVENT|TRACE|CRITICAL|FATAL)\] ([A-Z][A-Z0-9_]*)"
    r"(?:\((-?\d{1,12}),([^)]{0,300})\):\s?(\d{4})-(\d\d)-(\d\d)[- ](\d\d):(\d\d):(\d\d)\.(\d{3})\.(\d{3})|(?= \[))\s*")
_PTA_ERROR_RE = re.compile(
    r"\[(ERROR|WARNING|INFO|DEBUG)\] (\d{4})-(\d\d)-(\d\d)-(\d\d):(\d\d):(\d\d) "
    r"\(PID:(\d{1,12}), Device:(-?\d{1,9}), RankID:(-?\d{1,9})\) (ERR(\d\d)\d{3})\s*(\w{0,100})")
_NPU_G12_RE = re.compile(
    r"(?:\[rank:(\d{1,6})\]: ?)?(?:\[(\d{1,12})\] )?\[(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d):(\d{3})\] "
    r"([\w.]{1,200}): \[(DEBUG|INFO|WARNING|ERROR|CRITICAL)\] (?:\[(\d{1,12})\] )?")
_NPU_BARE_RE = re.compile(r"(torch_npu[\w.]{0,200}): \[(DEBUG|INFO|WARNING|ERROR|CRITICAL)\] (?:\[(\d{1,12})\] )?")
_GLOG_RE = re.compile(
    r"([VDIWEFC])(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6}) {1,16}(\d{1,12})(?: ([^\s\]]{1,300}?):(\d{1,9}))?\] ?")
_C10_RE = re.compile(
    r"\[([WEIF])(?:(\d{3,4}) (\d\d):(\d\d):(\d\d)\.(\d{1,9}))? ?([^\s\]]{1,300}?):(\d{1,9})\] ")
_ECODE = r"[EW][0-9A-Z]\d{4}"
_ECODE_HEAD_RE = re.compile(
    r"(" + _ECODE + r")(?::\s*|(?=\[PID))(?:\[PID:\s*\[?(\d{1,12})\]?\]?\s*)?"
    r"(?:(\d{4})-(\d\d)-(\d\d)-(\d\d):(\d\d):(\d\d)\.(\d{3})\.(\d{3})\s*)?(?:\((" + _ECODE + r")\):\s*)?")
_PID_ECODE_RE = re.compile(
    r"\[PID:\s*(\d{1,12})\]\s*(\d{4})-(\d\d)-(\d\d)-(\d\d):(\d\d):(\d\d)\.(\d{3})\.(\d{3})\s*(?:(\w{1,100})\((" + _ECODE + r")\):\s*)?")
_EXCEPTION_RE = re.compile(
    r"(?<![\w.])((?:[A-Za-z_]\w{0,100}\.){0,20}(?:[A-Z]\w{0,100}(?:Error|Exception|Exit|Interrupt|Warning|Unsupported)|Unsupported)): ")
_CANN_TAIL_RE = re.compile(r"\[FUNC:([^\]]{0,300})\]\[FILE:([^\]]{0,300})\]\[LINE:(\d{1,9})\]")
_FUNC_RE = re.compile(r"(?<![\w~])([A-Za-z_~][\w~]{0,200}):(?!:)")
_PTA_APP_RE = re.compile(r"(?<![^\s:])([^\s:]{1,300}):([^\s:]{1,300}):(\d{1,9}): \"\[PTA\]:\"?")


def parse_line(text: str, year: Optional[int] = None) -> ParsedLine:
    """Split one physical line (no line ending) into its fields. Never raises; unknown lines are `text`.

    `year` is assumed for layouts that print none (default: this year); pass the run's year when known.
    """
    first = text[:1]
    if first == "(" or first == "[" or first in "DIWEC" or _GREP_HINT_RE.search(text, 0, 400):
        prefix, body = strip_prefixes(text)
    else:
        prefix, body = "", text
    if prefix:
        parsed = _parse_body(body, year)
        if parsed.format == "text" or parsed.format == "exception" or not parsed.timestamp:
            header = _header_fields(prefix, year)
            if header and parsed.format == "text":
                parsed.format = "vllm"
                parsed.file, parsed.line = header[4], header[5]
            if header:
                if not parsed.level:
                    parsed.level = header[0]
                if not parsed.time:
                    parsed.time, parsed.timestamp = header[1], header[2]
                if not parsed.module and parsed.format == "vllm":
                    parsed.module = header[4]
        parsed.prefix = prefix + parsed.prefix  # a layout's own header (SGLang's) follows the worker prefix
        _prefix_ids(parsed, prefix)
        return parsed
    return _parse_body(body, year)


def _header_fields(prefix: str, year: Optional[int]):
    """The last vLLM header inside `prefix`: (level, time, timestamp, pid, file, line) or None."""
    found = None
    for match in _VLLM_RE.finditer(prefix):
        found = match
    if not found:
        return None
    level, mo, d, h, mi, s, file, line = found.groups()
    stamp = make_timestamp(year or DEFAULT_YEAR, int(mo), int(d), int(h), int(mi), int(s))
    return (level, f"{mo}-{d} {h}:{mi}:{s}", stamp, "", file, int(line))


def _prefix_ids(parsed: ParsedLine, prefix: str) -> None:
    """pid and rank from worker/rank prefixes, where the line itself carries none."""
    if "pid=" in prefix and not parsed.pid:
        match = None
        for match in _WORKER_RE.finditer(prefix):
            pass
        if match:
            parsed.pid = match.group(2)
    if parsed.rank is None:
        if "[rank" in prefix or "[default" in prefix:
            match = _RANK_PREFIX_RE.search(prefix)
            if match:
                parsed.rank = int(match.group(1))
                return
        if "TP" in prefix:
            for worker in _WORKER_RE.finditer(prefix):
                tp = _TP_RE.search(worker.group(1))
                if tp:
                    parsed.rank = int(tp.group(1))


def _parse_body(body: str, year: Optional[int]) -> ParsedLine:
    first = body[:1]
    if first == "[":
        second = body[1:2]
        if second in "EWIDTCF" and body[2:3].isalpha():  # [ERROR] / [WARNING] / [EVENT] / [TRACE] ...
            parsed = _parse_plog(body) or _parse_pta_error(body)
            if parsed:
                return parsed
        if second in "WEIF":
            parsed = _parse_c10(body, year)
            if parsed:
                return parsed
        if second in "r0123456789":
            parsed = _parse_npu_g12(body)
            if parsed:
                return parsed
        if body.startswith("[Error]: "):  # third line of a torch_npu exception: the meaning of the ACL code (§3.1)
            return ParsedLine("pta_error", level="ERROR", module="PTA", message=body[9:])
        if second == "P":
            parsed = _parse_pid_ecode(body)
            if parsed:
                return parsed
        if second == "2" or second == "1":
            parsed = _parse_sglang(body)
            if parsed:
                return parsed
    elif first in "VDIWEFC" and body[1:2].isdigit():
        parsed = _parse_glog(body, year)
        if parsed:
            return parsed
    if first in "EW" and body[1:2].isalnum():
        parsed = _parse_ecode(body)
        if parsed:
            return parsed
    if first == "t" and body.startswith("torch_npu"):
        parsed = _parse_npu_bare(body)
        if parsed:
            return parsed
    if first.isalpha() and ": " in body[:160]:
        parsed = _parse_exception(body)
        if parsed:
            return parsed
    return _parse_text(body)


def small_int(text: str, digits: int = 9) -> Optional[int]:
    """`text` as an int when it is 1 to `digits` ASCII digits, else None: a hostile line can hold any run
    of digits where a line number goes, and int() refuses '²' (a digit, not a decimal) and runs over 4300 digits."""
    return int(text) if 0 < len(text) <= digits and text.isdecimal() else None


def _level(word: str) -> str:
    return _LEVEL_WORDS.get(word, word)


def _parse_plog(body: str) -> Optional[ParsedLine]:
    match = _PLOG_RE.match(body)
    if not match:
        return None
    level, module, pid, pname, y, mo, d, h, mi, s, ms, us = match.groups()
    parsed = ParsedLine("plog", level=_level(level), module=module, pid=pid or "")
    if y:
        parsed.time = f"{y}-{mo}-{d}-{h}:{mi}:{s}.{ms}.{us}"
        parsed.timestamp = make_timestamp(int(y), int(mo), int(d), int(h), int(mi), int(s), int(ms) / 1e3 + int(us) / 1e6)
    _plog_rest(parsed, body, match.end())
    return parsed


def _plog_rest(parsed: ParsedLine, body: str, pos: int) -> None:
    """`[file:line]tid Func:msg` and its HCCL (`[file:line] [tid][tag]msg`), TDT (`[file:line][Func][tid:N] msg`)
    and status-tagged (`[status:init] [hcom.cc:196][...]`) variants."""
    end = len(body)
    # An optional status tag before the location: "[status:init] [hcom.cc:196]".
    if body.startswith("[status:", pos):
        close = body.find("]", pos)
        if close > 0:
            pos = close + 1
            while pos < end and body[pos] == " ":
                pos += 1
    if body.startswith("[", pos):
        close = body.find("]", pos)
        colon = body.rfind(":", pos, close) if close > 0 else -1
        line = small_int(body[colon + 1:close]) if colon > pos else None
        if line is not None:
            parsed.file = body[pos + 1:colon]
            parsed.line = line
            pos = close + 1
            # TDT: [Func][tid:N]
            if body.startswith("[", pos):
                close = body.find("]", pos)
                nxt = body[close + 1:close + 6] if close > 0 else ""
                token = body[pos + 1:close] if close > 0 else ""
                if nxt == "[tid:" and token.replace("_", "").isalnum():
                    parsed.func = token
                    pos = close + 1
            while pos < end and body[pos] == " " and body.startswith("[", pos + 1):
                pos += 1
            # HCCL: [tid] (sometimes [pid][tid]); TDT: [tid:N]
            while body.startswith("[", pos):
                close = body.find("]", pos)
                token = body[pos + 1:close] if close > 0 else ""
                if token.isdigit():
                    parsed.tid = token
                elif token.startswith("tid:") and token[4:].strip().isdigit():
                    parsed.tid = token[4:].strip()
                else:
                    break
                pos = close + 1
    # RUNTIME/ASCENDCL/GE/APP: the tid right after "]" (or after one space), then a space.
    if not parsed.tid:
        start = pos + 1 if body.startswith(" ", pos) else pos
        stop = start
        while stop < end and body[stop].isdigit():
            stop += 1
        if stop > start and stop < end and body[stop] == " ":
            parsed.tid = body[start:stop]
            pos = stop + 1
    while pos < end and body[pos] == " ":
        pos += 1
    rest = body[pos:]
    if parsed.module == "APP" and '"[PTA]:' in rest:
        _pta_app(parsed, rest)
        return
    if not parsed.func:
        match = _FUNC_RE.match(rest)
        if match:
            parsed.func = match.group(1)
            rest = rest[match.end():].lstrip(" ")
    parsed.message = rest


def _pta_app(parsed: ParsedLine, rest: str) -> None:
    """torch_npu's own lines in plog (`ASCEND_LOGx`, TN torch_npu/csrc/core/npu/npu_log.h): the real torch_npu
    location replaces log_inner.cpp. Builds differ in the order of file and function (formats.md §2.4)."""
    match = _PTA_APP_RE.match(rest)
    if not match:
        parsed.message = rest
        return
    first, second, line = match.groups()
    if "." in second and "." not in first.rsplit("/", 1)[-1]:
        parsed.func, parsed.file = first, second
    else:
        parsed.file, parsed.func = first, second
    parsed.line = int(line)
    message = rest[match.end():]
    while message.endswith('"'):
        message = message[:-1]
    parsed.message = message.rstrip()


def _parse_pta_error(body: str) -> Optional[ParsedLine]:
    match = _PTA_ERROR_RE.match(body)
    if not match:
        return None
    level, y, mo, d, h, mi, s, pid, device, rank, code, _sub, submodule = match.groups()
    parsed = ParsedLine("pta_error", level=_level(level), module=submodule or "PTA", pid=pid,
                        time=f"{y}-{mo}-{d}-{h}:{mi}:{s}",
                        timestamp=make_timestamp(int(y), int(mo), int(d), int(h), int(mi), int(s)),
                        message=body[match.start(11):])
    device_id = int(device)
    rank_id = int(rank)
    parsed.device = device_id if device_id >= 0 else None
    parsed.rank = rank_id if rank_id >= 0 else None
    return parsed


def _parse_npu_g12(body: str) -> Optional[ParsedLine]:
    match = _NPU_G12_RE.match(body)
    if not match:
        return None
    rank, pid, y, mo, d, h, mi, s, ms, logger, level, tid = match.groups()
    return ParsedLine(
        "npu_g2" if pid or tid else "npu_g1", level=level, module=logger, pid=pid or "", tid=tid or "",
        rank=int(rank) if rank is not None else None, time=f"{y}-{mo}-{d} {h}:{mi}:{s}:{ms}",
        timestamp=make_timestamp(int(y), int(mo), int(d), int(h), int(mi), int(s), int(ms) / 1e3),
        message=body[match.end():])


def _parse_npu_bare(body: str) -> Optional[ParsedLine]:
    """A G1/G2 line whose date prefix was cut by the reporter (`torch_npu.memory: [ERROR] [269128] ...`)."""
    match = _NPU_BARE_RE.match(body)
    if not match:
        return None
    logger, level, tid = match.groups()
    return ParsedLine("npu_g2" if tid else "npu_g1", level=level, module=logger, tid=tid or "", message=body[match.end():])


# Which TORCH_NPU_LOGS logger a C++/Python source file writes through (formats.md §1.2 "emitted from").
_LOGGER_BY_FILE = (
    ("NPUGraph", "torch_npu.npugraph"), ("Graph.cpp", "torch_npu.npugraph"), ("graphs.py", "torch_npu.npugraph"),
    ("_graph_tree", "torch_npu.npugraph"), ("_npugraph", "torch_npu.npugraph"),
    ("CachingAllocator", "torch_npu.memory"), ("CachingHostAllocator", "torch_npu.memory"),
    ("NPUQueue", "torch_npu.dispatch"), ("OpParamMaker", "torch_npu.dispatch"), ("OpCommand", "torch_npu.dispatch.time"),
    ("AclCallDecorator", "torch_npu.acl"), ("AclInterface", "torch_npu.acl"),
)


def _logger_for(file: str, message: str) -> str:
    if message.startswith("NPUGRAPH") or message.startswith("NPUGraph"):
        return "torch_npu.npugraph"
    if message.startswith("[ACL CALL]"):
        return "torch_npu.acl"
    for needle, logger in _LOGGER_BY_FILE:
        if needle in file:
            return logger
    return ""


def _parse_glog(body: str, year: Optional[int]) -> Optional[ParsedLine]:
    match = _GLOG_RE.match(body)
    if not match:
        return None
    short, mo, d, h, mi, s, us, pid, file, line = match.groups()
    message = body[match.end():]
    rank = None
    artifact = ""
    is_python = bool(file) and file.endswith(".py")
    if message.startswith("[rank:"):  # G3: "[rank:R] " after the location
        close = message.find("] ")
        rank = small_int(message[6:close], 6) if close > 6 else None
        if rank is not None:
            message = message[close + 2:]
    else:  # torch formatter: optional " [0/1]" trace id and " [__artifact]"
        while message.startswith("["):
            close = message.find("] ")
            token = message[1:close] if close > 0 else ""
            if token.startswith("__") and token[2:].replace("_", "").isalnum():
                artifact = token[2:]
                is_python = True
            elif token and token.replace("/", "").replace("_", "").isdigit() and "/" in token:
                is_python = True
            else:
                break
            message = message[close + 2:]
    parsed = ParsedLine(
        "torch_py" if is_python else "npu_g3", level=SHORT_LEVELS.get(short, ""), pid=pid, file=file or "",
        line=int(line) if line else 0, rank=rank, message=message,
        time=f"{mo}{d} {h}:{mi}:{s}.{us}",
        timestamp=make_timestamp(year or DEFAULT_YEAR, int(mo), int(d), int(h), int(mi), int(s), int(us) / 1e6))
    parsed.module = _logger_for(parsed.file, message) or artifact or (file or "")
    return parsed


def _parse_c10(body: str, year: Optional[int]) -> Optional[ParsedLine]:
    match = _C10_RE.match(body)
    if not match:
        return None
    short, mmdd, h, mi, s, frac, file, line = match.groups()
    parsed = ParsedLine("c10_warn", level=SHORT_LEVELS.get(short, ""), file=file, line=int(line))
    if mmdd:
        mo, d = int(mmdd[:-2]), int(mmdd[-2:])
        parsed.time = f"{mmdd} {h}:{mi}:{s}.{frac}"
        parsed.timestamp = make_timestamp(year or DEFAULT_YEAR, mo, d, int(h), int(mi), int(s), float("0." + frac))
    message = body[match.end():]
    if message.startswith("Warning: "):
        message = message[9:]
    if message.endswith(")"):
        cut = message.rfind(" (function ")
        if cut >= 0:
            parsed.func = message[cut + 11:-1]
            message = message[:cut]
    parsed.message = message
    return parsed


def _parse_ecode(body: str) -> Optional[ParsedLine]:
    match = _ECODE_HEAD_RE.match(body)
    if not match:
        return None
    code, pid, y, mo, d, h, mi, s, ms, us, _inner = match.groups()
    parsed = ParsedLine("cann_ecode", level="ERROR" if code[0] == "E" else "WARNING", module=code, pid=pid or "")
    if y:
        parsed.time = f"{y}-{mo}-{d}-{h}:{mi}:{s}.{ms}.{us}"
        parsed.timestamp = make_timestamp(int(y), int(mo), int(d), int(h), int(mi), int(s), int(ms) / 1e3 + int(us) / 1e6)
    _cann_message(parsed, f"{code}: {body[match.end():]}")
    return parsed


def _parse_pid_ecode(body: str) -> Optional[ParsedLine]:
    """`[PID: 46706] 2026-06-04-10:17:18.891.861 Insufficient_Stream_Resources(EL0009): msg`."""
    match = _PID_ECODE_RE.match(body)
    if not match:
        return None
    pid, y, mo, d, h, mi, s, ms, us, title, code = match.groups()
    parsed = ParsedLine(
        "cann_ecode", level="ERROR" if not code or code[0] == "E" else "WARNING", module=code or "", pid=pid,
        time=f"{y}-{mo}-{d}-{h}:{mi}:{s}.{ms}.{us}",
        timestamp=make_timestamp(int(y), int(mo), int(d), int(h), int(mi), int(s), int(ms) / 1e3 + int(us) / 1e6))
    rest = body[match.end():]
    _cann_message(parsed, f"{code}: {title}: {rest}" if code else rest)
    return parsed


def _cann_message(parsed: ParsedLine, message: str) -> None:
    if "[FUNC:" in message:
        match = _CANN_TAIL_RE.search(message)
        if match:
            parsed.func, parsed.file, parsed.line = match.group(1), match.group(2), int(match.group(3))
    parsed.message = message


def _parse_exception(body: str) -> Optional[ParsedLine]:
    match = _EXCEPTION_RE.match(body)
    if not match:
        return None
    name = match.group(1)
    level = "WARNING" if name.endswith("Warning") else "ERROR"
    return ParsedLine("exception", level=level, module=name, message=body)


def _parse_sglang(body: str) -> Optional[ParsedLine]:
    match = _SGLANG_RE.match(body)
    if not match:
        return None
    y, mo, d, h, mi, s, tags = match.groups()
    parsed = ParsedLine("vllm", time=f"{y}-{mo}-{d} {h}:{mi}:{s}",
                        timestamp=make_timestamp(int(y), int(mo), int(d), int(h), int(mi), int(s)),
                        message=body[match.end():], prefix=body[:match.end()])  # the header is a prefix too
    if tags:
        tp = _TP_RE.search(tags)
        if tp:
            parsed.rank = int(tp.group(1))
    return parsed


def _parse_text(body: str) -> ParsedLine:
    parsed = ParsedLine("text", message=body)
    if "[FUNC:" in body:  # a line of a CANN error-message block: "... [FUNC:x][FILE:y][LINE:z]"
        match = _CANN_TAIL_RE.search(body)
        if match:
            parsed.func, parsed.file, parsed.line = match.group(1), match.group(2), int(match.group(3))
    return parsed


# --------------------------------------------------------------------------------------------
# Error codes, normalised (formats.md §2.5).
# --------------------------------------------------------------------------------------------

class CodeHit(NamedTuple):
    code: str  # "107030", "0x703001c", "EE9999", "ERR00100"
    kind: str  # acl | inner | ecode | pta | hccl | ge
    context: str  # how it was written: "error code is", "runtime result =", "ErrCode=", ...


_CODE_RE = re.compile(
    r"(?<![A-Za-z])(error code is|runtime result =|ErrCode=|ret(?:Code)? ?= ?|InnerCode=|errNo\[|ge result =|ErrorNo:)\s*"
    r"(0x[0-9a-fA-F]{1,16}(?![0-9a-fA-F])|\d{1,12}(?!\d))"
    r"|\b(ERR\d{5})\b"
    r"|(?<![\w.])(" + _ECODE + r")\b")


_CODE_WORDS = ("code is", "result =", "Code=", "ret", "errNo[", "ErrorNo:", "ERR")
_ECODE_QUICK = re.compile(_ECODE)


def extract_codes(text: str) -> List[CodeHit]:
    """Error codes in a message: decimal ACL/runtime codes (`error code is 107027`, `runtime result = 207005`,
    `ErrCode=107030`), hex inner codes (`InnerCode=0x703001c`, `retCode=0x7020023`), HCCL `errNo[0x..05000002]`,
    CANN E-codes (`EE9999`, `EL0004`) and torch_npu `ERR00100` — each once, in order of appearance."""
    if not text:
        return []
    # Cheap substring checks first: most log lines carry no code, and the full regex costs ~10 µs per line.
    if not any(word in text for word in _CODE_WORDS) and _ECODE_QUICK.search(text) is None:
        return []
    hits: List[CodeHit] = []
    seen = set()
    for match in _CODE_RE.finditer(text):
        context, number, pta, ecode = match.groups()
        if number is not None:
            hit = _numeric_code(context, number, text)
        elif pta:
            hit = CodeHit(pta, "pta", "ERR")
        else:
            hit = CodeHit(ecode.upper(), "ecode", "E-code")
        if hit and hit.code not in seen:
            seen.add(hit.code)
            hits.append(hit)
    return hits


def normalise_code(raw: str) -> str:
    """`0x0703001C` → `0x703001c`; `0107030` → `107030`; `ee9999` → `EE9999`."""
    text = raw.strip()
    if text[:2].lower() == "0x":
        try:
            return hex(int(text, 16))
        except ValueError:
            return text.lower()
    number = small_int(text, 18)
    return str(number) if number is not None else text.upper()


def _numeric_code(context: str, number: str, text: str) -> Optional[CodeHit]:
    context = context.strip()
    code = normalise_code(number)
    if context.startswith("errNo"):
        return CodeHit(code, "hccl", "errNo")
    if context in ("InnerCode=", "retCode=") or (number.startswith("0x") and not context.startswith("error code")):
        return CodeHit(code, "inner", context)
    if context.startswith("ret"):  # "ret = 0" / "ret[9]"-like: only non-zero hex/decimal runtime codes
        if code in ("0",) or len(code) < 6:
            return None
        return CodeHit(code, "acl", context)
    if context.startswith("ge result") or context.startswith("ErrorNo"):
        return CodeHit(code, "ge", context)
    if code == "0":
        return None
    if len(code) < 6 and ("Hccl" in text or "HCCL" in text or "hccl" in text):
        return CodeHit(code, "hccl", context)
    return CodeHit(code, "acl", context)


# --------------------------------------------------------------------------------------------
# Rank from a path.
# --------------------------------------------------------------------------------------------

_RANK_NAME_RE = re.compile(r"(?:^|[^a-z])(?:rank|worker)[_-]?(\d{1,5})(?!\d)", re.IGNORECASE)
_DEVICE_DIR_RE = re.compile(r"device-(\d{1,3})$")


def rank_from_path(path: str) -> Optional[int]:
    """Rank (or device) from file or directory names, innermost first: `rank_1.log`, `worker_2/`, `rank3/`,
    CANN's per-device directory `device-3/` (formats.md §2.1), torchrun's `--log-dir` layout
    `<run>/attempt_0/<local_rank>/stdout.log`. A plog file name (`plog-<pid>_<time>.log`,
    `device-<pid>_<time>.log`) carries a pid, not a rank, and is ignored."""
    if not path or path == "-":
        return None
    parts = [p for p in re.split(r"[\\/]+", path) if p]
    for index in range(len(parts) - 1, -1, -1):
        part = parts[index]
        is_file = index == len(parts) - 1
        name = part.lower()
        if is_file:
            if name.startswith(("plog-", "device-")):
                continue
            stem = os.path.splitext(name)[0]
            local_rank = small_int(parts[index - 1], 6) if index > 0 else None
            if name in ("stdout.log", "stderr.log", "error.json") and local_rank is not None:
                return local_rank
        else:
            stem = name
            match = _DEVICE_DIR_RE.match(name)
            if match:
                return int(match.group(1))
        match = _RANK_NAME_RE.search(stem)
        if match:
            return int(match.group(1))
    return None
