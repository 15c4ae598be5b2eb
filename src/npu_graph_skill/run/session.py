"""One `npu-graph run`: check the command, make the folder, plan the switches, run the job, and on
failure collect the versions, diagnose, compare with eager, write the manifest and pack the archive.

Everything after the job ended is best effort: an interrupt while collecting keeps what was written
and the command's exit status, and says so in the notes.
"""
from __future__ import annotations

import dataclasses
import datetime
import os
import shlex
import shutil
import sys
import uuid
from typing import Any, Callable, Dict, List, Optional, Sequence

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.core.render import Style, default_lang, pick
from npu_graph_skill.run import ab, bundle, report
from npu_graph_skill.run.child import Job, JobOutcome, check_command
from npu_graph_skill.run.model import EagerResult, RunResult
from npu_graph_skill.run.procs import MARKER
from npu_graph_skill.run.record import OutputRecorder
from npu_graph_skill.run.switches import PLOG_LEVELS, command_python, find_installed, plan_switches

MB = 1024 * 1024
DEFAULT_MAX_OUTPUT_MB = 50.0
DEFAULT_KILL_AFTER = 10.0


@dataclasses.dataclass
class _Options:
    """How the job runs and what is done after it (the keyword arguments of `run_command`)."""

    hang_timeout: Optional[float]
    kill_after: float
    max_output_mb: float
    pty: bool
    stdout_fd: int
    stderr_fd: int
    say: Callable[[str], None]
    lang: str
    keep: bool
    collect_env: bool
    pack: bool
    redact: bool
    source_dir: Optional[str]
    kb_dir: Optional[str]
    eager_vars: Optional[Dict[str, str]]
    eager_argv: Optional[List[str]]


def require_posix() -> None:
    if os.name != "posix" or not hasattr(os, "killpg"):
        raise UserError("npu-graph run needs a POSIX system (Linux): process groups and signals are how it "
                        f"runs and stops a job, and this is {sys.platform}; run the command yourself and give its "
                        "output to `npu-graph diagnose`")


def run_command(argv: Sequence[str], directory: Optional[str] = None, keep: bool = False,
                hang_timeout: Optional[float] = None, kill_after: float = DEFAULT_KILL_AFTER,
                max_output_mb: float = DEFAULT_MAX_OUTPUT_MB, plog_level: Optional[str] = None,
                log_switches: bool = True, pty: bool = True, redact: bool = True,
                eager_env: Optional[str] = None, eager_cmd: Optional[str] = None, lang: Optional[str] = None,
                source_dir: Optional[str] = None, kb_dir: Optional[str] = None, collect_env: bool = True,
                pack: bool = True, notify: Optional[Callable[[str], None]] = None, stdout_fd: int = 1,
                stderr_fd: int = 2, environ: Optional[Dict[str, str]] = None) -> RunResult:
    """Run `argv` and come back with its exit status, and on failure its diagnosis and bundle.

    `notify` receives the wrapper's own lines (default: none). The text the diagnosis read is on the
    result as `.symptom` (not in its JSON), for recording the case."""
    require_posix()
    argv = list(argv)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        raise UserError("no command: npu-graph run [options] -- CMD ARGS...  (e.g. npu-graph run -- python train.py)")
    _check_numbers(hang_timeout, kill_after, max_output_mb, plog_level)
    environ = dict(os.environ if environ is None else environ)
    check_command(argv, environ)
    eager_vars = ab.parse_eager_env(eager_env) if eager_env is not None else None
    eager_argv = ab.parse_eager_cmd(eager_cmd) if eager_cmd is not None else None
    if eager_vars is not None and eager_argv is not None:
        raise UserError("give --eager or --eager-cmd, not both")
    if eager_argv is not None:
        check_command(eager_argv, environ)
    options = _Options(hang_timeout=hang_timeout, kill_after=kill_after, max_output_mb=max_output_mb, pty=pty,
                       stdout_fd=stdout_fd, stderr_fd=stderr_fd, say=notify or (lambda line: None),
                       lang=lang or default_lang(), keep=keep, collect_env=collect_env, pack=pack, redact=redact,
                       source_dir=source_dir, kb_dir=kb_dir, eager_vars=eager_vars, eager_argv=eager_argv)

    cwd = os.getcwd()
    started = datetime.datetime.now()
    folder = bundle.new_run_folder(directory or cwd, started)
    try:
        installed = find_installed(command_python(argv, environ), environ)
        plan = plan_switches(environ, installed, os.path.join(folder, bundle.PLOG_DIR), plog_level, log_switches)
        os.makedirs(os.path.join(folder, bundle.PLOG_DIR), exist_ok=True)
        switches = [s.to_dict() for s in plan.switches]
        bundle.write_command(folder, argv, cwd, switches, started.isoformat(timespec="seconds"))
        for line in report.start_lines(folder, switches, options.lang, Style(sys.stderr)):
            options.say(line)
        outcome = _run_job(argv, plan.env, os.path.join(folder, bundle.OUTPUT), options)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)  # nothing ran (or the wrapper broke before): leave no husk
        raise

    result = RunResult(
        command=argv, command_line=shlex.join(argv), cwd=cwd, started=started.isoformat(timespec="seconds"),
        duration_s=outcome.duration_s, status="passed" if _passed(outcome) else "failed",
        exit_status=outcome.exit_status, signal=outcome.signal, ended_by=outcome.ended_by, folder=folder,
        lang=options.lang, switches=switches, installed=_installed_summary(plan.installed),
        output=_output_summary(outcome, folder), decisive_live=outcome.decisive, forwarded=outcome.forwarded,
        leftovers=[dict(pid=p.pid, command=p.command, pgid=outcome.pgid) for p in outcome.leftovers],
        killed=[dict(pid=p.pid, command=p.command) for p in outcome.killed], redacted=redact)
    result.symptom = ""  # type: ignore[attr-defined]
    try:
        _after_job(result, outcome, plan, environ, started, options)
    except KeyboardInterrupt:
        result.notes.append(pick({"en": "interrupted while collecting the bundle: the folder holds what was written "
                                        "so far (`npu-graph bundle DIR` finishes it)",
                                  "zh": "收集材料时被中断：目录中保留已写入的内容（可用 `npu-graph bundle DIR` 补全）"},
                                 options.lang))
    return result


def _check_numbers(hang_timeout, kill_after, max_output_mb, plog_level) -> None:
    if hang_timeout is not None and hang_timeout <= 0:
        raise UserError("--hang-timeout must be more than 0 seconds")
    if kill_after < 0:
        raise UserError("--kill-after must be 0 seconds or more")
    if max_output_mb <= 0:
        raise UserError("--max-output-mb must be more than 0")
    if plog_level is not None and plog_level not in PLOG_LEVELS:
        raise UserError(f"--plog-level: one of {', '.join(PLOG_LEVELS)}")


def _passed(outcome: JobOutcome) -> bool:
    return outcome.exit_status == 0 and outcome.ended_by != "hang"


def _run_job(argv: List[str], env: Dict[str, str], output_path: str, options: _Options) -> JobOutcome:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()  # our own lines first, then the child's bytes on the raw descriptors
        except (OSError, ValueError):
            pass
    recorder = OutputRecorder(output_path, int(options.max_output_mb * MB))
    job = Job(argv, env, recorder, run_id=uuid.uuid4().hex[:16], hang_timeout=options.hang_timeout,
              kill_after=options.kill_after, use_pty=options.pty, stdout_fd=options.stdout_fd,
              stderr_fd=options.stderr_fd, notify=options.say, texts=report.job_texts(options.lang))
    return job.run()


def _installed_summary(installed) -> Dict[str, Any]:
    return {key: value for key, value in installed.to_dict().items() if value not in (None, "", [], False)}


def _output_summary(outcome: JobOutcome, folder: str) -> Dict[str, Any]:
    stats = outcome.output
    return {"file": os.path.relpath(stats.file, folder), "bytes": stats.bytes, "lines": stats.lines,
            "kept_bytes": stats.kept_bytes, "dropped_bytes": stats.dropped_bytes, "dropped_lines": stats.dropped_lines,
            "limit_bytes": stats.limit_bytes, "terminals": outcome.terminals}


def _after_job(result: RunResult, outcome: JobOutcome, plan, environ: Dict[str, str], started: datetime.datetime,
               options: _Options) -> None:
    """Collect, diagnose, compare, write the manifest, pack."""
    folder = result.folder or ""
    user_plog_root = environ.get("ASCEND_PROCESS_LOG_PATH")
    if user_plog_root and os.path.isdir(user_plog_root):
        _copied, notes = bundle.copy_new_plogs(user_plog_root, folder, started.timestamp())
        result.notes.extend(notes)
    bundle.remove_empty_plog_dir(folder)
    result.plogs = bundle.plog_files(folder)
    if result.status == "passed" and not options.keep:
        shutil.rmtree(folder, ignore_errors=True)
        result.folder = None
        return
    _collect(result, plan, folder, options)
    if result.status == "failed" and (options.eager_vars is not None or options.eager_argv is not None):
        _eager(result, plan.env, folder, options)
    result.files = bundle.folder_files(folder)
    bundle.write_manifest(folder, result)
    if options.pack:
        from npu_graph_skill.run.pack import pack_folder

        packed = pack_folder(folder, redact=options.redact)
        result.archive, result.redactions = packed.archive, packed.redactions
        result.files = bundle.folder_files(folder)
        bundle.write_manifest(folder, result)


def _collect(result: RunResult, plan, folder: str, options: _Options) -> None:
    if options.collect_env:
        try:
            result.versions = bundle.write_env(folder, plan.installed.python, _without_marker(plan.env))
        except Exception as exc:  # noqa: BLE001 - versions are a material, not a reason to lose the run
            result.notes.append(f"npu-graph env failed: {exc.__class__.__name__}: {exc}")
    if result.status != "failed":
        return
    provided = bundle.provided_materials(folder, result.switches)
    diagnosis, first_failure, text, _inputs = bundle.diagnose_folder(folder, options.lang, options.source_dir,
                                                                     options.kb_dir, provided)
    result.first_failure = first_failure
    if diagnosis is None:
        result.notes.append(report.text("no_diagnosis", options.lang))
        return
    bundle.write_diagnosis(folder, diagnosis)
    result.diagnosis = diagnosis.to_dict()
    result.symptom = text  # type: ignore[attr-defined]


def _without_marker(env: Dict[str, str]) -> Dict[str, str]:
    return {k: v for k, v in env.items() if k != MARKER}


def _eager(result: RunResult, env: Dict[str, str], folder: str, options: _Options) -> None:
    """The same job with graph mode off, into folder/eager/, and the verdict."""
    lang = options.lang
    if result.ended_by == "interrupted":
        result.notes.append(pick({"en": "graph vs eager skipped: the run was interrupted",
                                  "zh": "跳过图模式 vs eager 对比：运行被中断"}, lang))
        return
    eager_folder = os.path.join(folder, bundle.EAGER_DIR)
    os.makedirs(os.path.join(eager_folder, bundle.PLOG_DIR), exist_ok=True)
    child_env = dict(env)
    if env.get("ASCEND_PROCESS_LOG_PATH") == os.path.join(folder, bundle.PLOG_DIR):
        child_env["ASCEND_PROCESS_LOG_PATH"] = os.path.join(eager_folder, bundle.PLOG_DIR)
    child_env.update(options.eager_vars or {})
    command = options.eager_argv or result.command
    how = " ".join(f"{k}={v}" for k, v in (options.eager_vars or {}).items()) or shlex.join(command)
    options.say(report.PREFIX + report.text("eager_start", lang, how=how))
    outcome = _run_job(command, child_env, os.path.join(eager_folder, bundle.OUTPUT), options)
    bundle.remove_empty_plog_dir(eager_folder)
    eager_diagnosis = None
    if not _passed(outcome) and outcome.ended_by != "interrupted":
        eager_diagnosis, _, _, _ = bundle.diagnose_folder(eager_folder, lang, with_env=False)
        if eager_diagnosis is not None:
            bundle.write_diagnosis(eager_folder, eager_diagnosis)
    graph = result.diagnosis or {}
    eager_error = eager_diagnosis.error if eager_diagnosis is not None else (outcome.decisive or "")
    eager_pattern = (eager_diagnosis.candidates[0].id if eager_diagnosis is not None and eager_diagnosis.candidates
                     and not eager_diagnosis.novel else None)
    graph_pattern = graph["candidates"][0]["id"] if graph.get("candidates") and not graph.get("novel") else None
    kind = ab.verdict(graph.get("error"), graph_pattern, outcome.exit_status, outcome.ended_by, eager_error,
                      eager_pattern)
    result.eager = EagerResult(
        command=command, env=dict(options.eager_vars or {}), exit_status=outcome.exit_status,
        ended_by=outcome.ended_by, error=eager_error or "", verdict=kind,
        summary=ab.summary(kind, how, outcome.exit_status, eager_error, outcome.ended_by)).to_dict()
