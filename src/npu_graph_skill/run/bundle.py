"""The run folder `npu-graph-run-<time>/`: what goes in it, and its diagnosis.

    command.txt      the command as run: folder, the variables the run set, the command line
    output.log       the command's stdout and stderr, in arrival order (head and tail when huge)
    ascend_log/      CANN plogs and device logs of every process (ASCEND_PROCESS_LOG_PATH)
    env.txt          `npu-graph env` for the command's Python and environment
    diagnosis.json   the four-section diagnosis (schema npu-graph-skill/diagnosis/1), diagnosis.md
    eager/           the graph-off run of `--eager` / `--eager-cmd` (output.log, ascend_log/)
    run.json         the manifest (schema npu-graph-skill/run/1)

The folder holds the raw record; the archive beside it is the redacted copy to attach (`pack`).
"""
from __future__ import annotations

import datetime
import json
import os
import shlex
import shutil
from typing import Any, Dict, List, Optional, Sequence, Tuple

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.core.files import atomic_write, is_temp_name

OUTPUT = "output.log"
PLOG_DIR = "ascend_log"
ENV_TXT = "env.txt"
COMMAND_TXT = "command.txt"
MANIFEST = "run.json"
DIAGNOSIS_JSON = "diagnosis.json"
DIAGNOSIS_MD = "diagnosis.md"
EAGER_DIR = "eager"
LARGE_INPUT = 1024 * 1024  # as diagnose/engine.py: above this the log analyzer reduces the input first
TAIL_LINES = 120  # an output without any error line is diagnosed from its end
MAX_COPIED_PLOG_BYTES = 512 * 1024 * 1024


def new_run_folder(parent: str, now: Optional[datetime.datetime] = None) -> str:
    """`parent/npu-graph-run-YYYYmmdd-HHMMSS` (with -2, -3 ... when taken), created."""
    now = now or datetime.datetime.now()
    base = os.path.join(os.path.abspath(parent), "npu-graph-run-" + now.strftime("%Y%m%d-%H%M%S"))
    for attempt in range(1, 1000):
        path = base if attempt == 1 else f"{base}-{attempt}"
        if os.path.exists(path + ".tar.gz"):
            continue
        try:
            os.makedirs(path)
            return path
        except FileExistsError:
            continue
        except OSError as exc:
            raise UserError(f"{parent}: cannot create the run folder there ({exc.strerror or exc}); "
                            "choose another with --dir") from None
    raise UserError(f"{parent}: too many run folders of the same second")


def write_command(folder: str, argv: Sequence[str], cwd: str, switches: Sequence[Dict[str, Any]], started: str) -> None:
    """A replayable record: where, with which variables, what."""
    assignments = " ".join(f"{s['name']}={shlex.quote(str(s['value']))}" for s in switches if s["action"] == "set")
    kept = [f"{s['name']}={s['value']}" for s in switches if s["action"] == "kept"]
    lines = [f"# npu-graph run, {started}", f"cd {shlex.quote(cwd)}"]
    if kept:
        lines.append("# already set by the user: " + ", ".join(kept))
    lines.append((assignments + " " if assignments else "") + shlex.join(argv))
    atomic_write(os.path.join(folder, COMMAND_TXT), "\n".join(lines) + "\n")


def write_env(folder: str, python: Optional[str], env: Dict[str, str]) -> Dict[str, Any]:
    """`npu-graph env` of the command's Python, as the command saw its environment → the versions."""
    from npu_graph_skill.doctor.envinfo import collect_env, pretty_str

    info = collect_env(python=python, environ=env)
    atomic_write(os.path.join(folder, ENV_TXT), pretty_str(info) + "\n")
    return {key: value for key, value in (
        ("python", info.python), ("torch", info.torch), ("torch_cuda", info.torch_cuda), ("torch_npu", info.torch_npu),
        ("torch_npu_import", info.torch_npu_import), ("cann", info.cann or info.cann_runtime), ("driver", info.driver),
        ("firmware", info.firmware), ("devices", len(info.devices) or None)) if value not in (None, "")}


def copy_new_plogs(root: str, folder: str, since: float) -> Tuple[List[str], List[str]]:
    """The plogs and device logs written under the user's own ASCEND_PROCESS_LOG_PATH during the run,
    copied into the folder's ascend_log/ (same relative paths). → (copied paths, notes)."""
    copied: List[str] = []
    notes: List[str] = []
    total = 0
    target_root = os.path.join(folder, PLOG_DIR)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if not (name.startswith(("plog-", "device-")) and name.endswith(".log")):
                continue
            path = os.path.join(dirpath, name)
            try:
                stat = os.stat(path)
            except OSError:
                continue
            if stat.st_mtime < since - 1:
                continue
            if total + stat.st_size > MAX_COPIED_PLOG_BYTES:
                notes.append(f"plogs over {MAX_COPIED_PLOG_BYTES >> 20} MB were not copied from {root}")
                return copied, notes
            relative = os.path.relpath(path, root)
            os.makedirs(os.path.dirname(os.path.join(target_root, relative)), exist_ok=True)
            try:
                shutil.copy2(path, os.path.join(target_root, relative))
            except OSError as exc:
                notes.append(f"{path}: not copied ({exc.strerror or exc})")
                continue
            total += stat.st_size
            copied.append(os.path.join(PLOG_DIR, relative))
    return copied, notes


def plog_files(folder: str) -> List[str]:
    """The log files under ascend_log/, relative to the folder."""
    root = os.path.join(folder, PLOG_DIR)
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        found += [os.path.relpath(os.path.join(dirpath, n), folder) for n in sorted(filenames) if not is_temp_name(n)]
    return found


def remove_empty_plog_dir(folder: str) -> None:
    root = os.path.join(folder, PLOG_DIR)
    for dirpath, _, _ in sorted(os.walk(root), key=lambda item: -len(item[0])):
        try:
            os.rmdir(dirpath)  # only empty folders go
        except OSError:
            pass


def folder_files(folder: str) -> List[str]:
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        found += [os.path.relpath(os.path.join(dirpath, n), folder) for n in sorted(filenames) if not is_temp_name(n)
                  and not n.startswith(".")]
    return found


# --------------------------------------------------------------------------------------------
# Diagnosis of a folder.
# --------------------------------------------------------------------------------------------

def diagnosis_inputs(folder: str) -> List[str]:
    """output.log (when the command printed anything) and every plog file."""
    paths = []
    output = os.path.join(folder, OUTPUT)
    if os.path.isfile(output) and os.path.getsize(output) > 0:
        paths.append(output)
    paths += [os.path.join(folder, p) for p in plog_files(folder) if os.path.getsize(os.path.join(folder, p)) > 0]
    return paths


def diagnose_folder(folder: str, lang: str, source_dir: Optional[str] = None, kb_dir: Optional[str] = None,
                    provided: Sequence[str] = (), with_env: bool = True):
    """→ (Diagnosis or None, first failure across ranks or None, the diagnosed text, the inputs)."""
    from npu_graph_skill.core.ingest import TextSource, read_text
    from npu_graph_skill.diagnose.engine import diagnose
    from npu_graph_skill.logs.analyze import analyze_logs, reduce_for_diagnosis

    paths = diagnosis_inputs(folder)
    if not paths:
        return None, None, "", []
    sources = [TextSource(name=os.path.relpath(p, folder), path=p) for p in paths]
    report = analyze_logs([], sources=sources)
    notes: List[str] = []
    if len(sources) > 1 or sum(s.size for s in sources) > LARGE_INPUT:
        text, notes = reduce_for_diagnosis(sources, report=report)
    else:
        text = read_text(sources[0], max_bytes=8 * LARGE_INPUT)
    if not text.strip() and os.path.isfile(os.path.join(folder, OUTPUT)):
        text = _tail(os.path.join(folder, OUTPUT), TAIL_LINES)
        notes.append(f"no error line in the output or the plogs: diagnosed its last {TAIL_LINES} lines")
    if not text.strip():
        return None, None, "", [os.path.relpath(p, folder) for p in paths]
    symptom = text
    env_path = os.path.join(folder, ENV_TXT)
    if with_env and os.path.isfile(env_path):
        with open(env_path, encoding="utf-8", errors="replace") as handle:
            text += "\n\n" + handle.read()  # the versions and variables, as a user would paste them below the error
    diagnosis = diagnose(text=text, lang=lang, source_dir=source_dir, kb_dir=kb_dir, provided=provided)
    diagnosis.notes[:0] = notes
    return diagnosis, first_failure_summary(report, folder), symptom, [os.path.relpath(p, folder) for p in paths]


def first_failure_summary(report, folder: str) -> Optional[Dict[str, Any]]:
    failure = report.first_failure
    if failure is None:
        return None
    consequences = failure.consequences
    return {
        "rank": failure.rank, "time": failure.time, "source": failure.where.source, "line": failure.where.line,
        "text": failure.where.text[:500], "codes": [c.code for c in failure.codes],
        "only_consequences": failure.only_consequences,
        "consequences": len(consequences),
        "consequence_ranks": sorted({c.rank for c in consequences if c.rank is not None}),
        "ranks_seen": sorted({r for s in report.sources for r in ([s.rank] if s.rank is not None else [])}
                             | {r for g in report.errors for r in g.ranks}),
    }


def _tail(path: str, lines: int) -> str:
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - 256 * 1024))
        data = handle.read()
    from npu_graph_skill.core.ingest import decode_line, strip_ansi

    return "\n".join(strip_ansi(decode_line(line)) for line in data.splitlines()[-lines:])


def write_diagnosis(folder: str, diagnosis) -> List[str]:
    from npu_graph_skill.core.render import to_json
    from npu_graph_skill.diagnose.report import render_markdown

    atomic_write(os.path.join(folder, DIAGNOSIS_JSON), to_json(diagnosis) + "\n")
    atomic_write(os.path.join(folder, DIAGNOSIS_MD), render_markdown(diagnosis))
    return [DIAGNOSIS_JSON, DIAGNOSIS_MD]


# --------------------------------------------------------------------------------------------
# The manifest.
# --------------------------------------------------------------------------------------------

def write_manifest(folder: str, result) -> None:
    data = result.to_dict()
    data["diagnosis"] = DIAGNOSIS_JSON if data.get("diagnosis") else None  # the report itself lives beside it
    atomic_write(os.path.join(folder, MANIFEST), json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # Python writes and reads it; the report's JSON must not carry it


def read_manifest(folder: str) -> Dict[str, Any]:
    if not os.path.isdir(folder):
        raise UserError(f"{folder}: no such directory (give the npu-graph-run-<time>/ folder)")
    path = os.path.join(folder, MANIFEST)
    if not os.path.isfile(path):
        raise UserError(f"{folder}: not a run folder of `npu-graph run` (no {MANIFEST}); "
                        "for any other folder of logs use `npu-graph diagnose DIR`")
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle, parse_constant=_not_json)
    except (OSError, ValueError, RecursionError) as exc:  # RecursionError: arrays nested thousands deep
        raise UserError(f"{path}: unreadable ({exc.__class__.__name__}: {exc})") from None
    if not isinstance(data, dict) or not str(data.get("schema", "")).startswith("npu-graph-skill/run/"):
        raise UserError(f"{path}: not a run manifest (schema npu-graph-skill/run/1 expected)")
    switches = data.get("switches")  # a hand-edited manifest may hold anything here
    data["switches"] = [s for s in switches if isinstance(s, dict)] if isinstance(switches, list) else []
    return data


def provided_materials(folder: str, switches: Sequence[Dict[str, Any]]) -> List[str]:
    """What the folder holds that the missing-materials list need not ask for."""
    provided = ["ranks"]  # every process of the job wrote into the one recorded output
    if os.path.isfile(os.path.join(folder, ENV_TXT)):
        provided.append("versions")
    if plog_files(folder):
        provided.append("plog")
    if any(s.get("name") in ("TORCH_NPU_LOGS", "TORCH_LOGS") and s.get("action") in ("set", "kept") for s in switches):
        provided.append("graph_log")
    return provided


def diagnose_bundle(folder: str, lang: Optional[str] = None, source_dir: Optional[str] = None,
                    kb_dir: Optional[str] = None, write: bool = False):
    """Diagnose a run folder again → BundleReport. `write` replaces its diagnosis.json / .md (the CLI does;
    the MCP tool only reads). The text the diagnosis read is on the report as `.symptom` (not in its JSON)."""
    from npu_graph_skill.core.render import default_lang
    from npu_graph_skill.run.model import BundleReport

    manifest = read_manifest(folder)
    lang = lang or default_lang()
    provided = provided_materials(folder, manifest.get("switches") or [])
    diagnosis, first_failure, text, inputs = diagnose_folder(folder, lang, source_dir, kb_dir, provided)
    written: List[str] = []
    notes: List[str] = []
    if diagnosis is None:
        notes.append("nothing to diagnose: the command printed nothing and wrote no plog")
    elif write:
        try:
            written = write_diagnosis(folder, diagnosis)
            manifest.update(diagnosis=DIAGNOSIS_JSON, first_failure=first_failure)
            atomic_write(os.path.join(folder, MANIFEST), json.dumps(manifest, ensure_ascii=False, indent=2) + "\n")
            written.append(MANIFEST)
        except OSError as exc:
            raise UserError(f"{folder}: cannot write the diagnosis there ({exc.strerror or exc})") from None
    result = BundleReport(folder=os.path.abspath(folder), run=manifest,
                          diagnosis=diagnosis.to_dict() if diagnosis is not None else None,
                          first_failure=first_failure, inputs=inputs, written=written, notes=notes)
    result.symptom = text  # type: ignore[attr-defined]
    return result
