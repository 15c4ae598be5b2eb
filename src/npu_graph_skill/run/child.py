"""Run the command as a child and stay out of its way.

- The child gets a session, hence a process group, of its own (`start_new_session`): everything it
  starts (torchrun's ranks, vLLM's workers, mpirun's processes) shares the group, so one `killpg`
  reaches all of them. Not being on the terminal's foreground group, it does not receive the
  terminal's Ctrl-C directly: the wrapper receives it and forwards it, and a second Ctrl-C sends
  SIGTERM, a third SIGKILL. SIGTERM, SIGHUP and SIGQUIT are forwarded too; Ctrl-Z stops the job and
  the wrapper, `fg` continues both; a window resize reaches the child's terminal.
- Its stdout and stderr reach ours unchanged, as bytes. Where ours is a terminal, the child's is a
  pseudo-terminal in raw mode (no `\\n` → `\\r\\n` translation, so the bytes stay the child's), so it
  keeps its colours, its progress bars and its line buffering; elsewhere it gets a pipe, as it would
  without the wrapper. Pipes are enlarged to 1 MB so the child runs ahead while the wrapper writes.
- Each read is written to our stream first, then to the record; small reads are coalesced (a 2 ms
  pause lets a logger's many small writes arrive as one read). Looking for a decisive error waits
  until the output goes quiet (`watch.DecisiveWatcher`), so it never holds a writing child back.
- When our stdout is closed by its reader (`| head`), the child's stdout is closed too, so it meets
  the broken pipe it would have met without the wrapper.
"""
from __future__ import annotations

import dataclasses
import errno
import os
import selectors
import shutil
import signal
import subprocess
import time
from typing import Callable, Dict, List, Optional, Tuple

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.run import procs
from npu_graph_skill.run.record import OutputRecorder, OutputStats
from npu_graph_skill.run.watch import QUIET, DecisiveWatcher

READ_SIZE = 1 << 18  # up to 256 KB a read: a busy pipe is drained in fewer, larger steps
PIPE_SIZE = 1 << 20
F_SETPIPE_SZ = 1031  # fcntl.F_SETPIPE_SZ (Linux), absent from the fcntl module before Python 3.10
TICK = 0.05
WATCH_SLICE = 0.01  # seconds of looking for a decisive error per tick of silence
# After a small read, wait this long before the next: a logger's many small writes then arrive as one
# read instead of one wake-up each (the 1 MB pipe holds them meanwhile; 2 ms of delay is not visible).
COALESCE_BYTES = 32 * 1024
COALESCE_WAIT = 0.002
DRAIN_QUIET = 1.0  # after the command exits, stop reading once its leftover processes are quiet this long
DRAIN_MAX = 10.0  # ... or this long after it exited, whatever they do
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


class CommandNotRunnable(UserError):
    """CMD cannot be started: 127 not found, 126 found but not executable (as a shell says it)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def check_command(argv: List[str], env: Dict[str, str]) -> None:
    """Refuse a command that cannot start before anything is created for it."""
    name = argv[0]
    if not name:
        raise CommandNotRunnable(": command not found", 127)
    if "/" in name:
        if not os.path.exists(name):
            raise CommandNotRunnable(f"{name}: No such file or directory", 127)
        if os.path.isdir(name):
            raise CommandNotRunnable(f"{name}: Is a directory", 126)
        if not os.access(name, os.X_OK):
            raise CommandNotRunnable(f"{name}: Permission denied", 126)
        return
    path = env.get("PATH", os.defpath)
    if shutil.which(name, path=path):
        return
    for folder in path.split(os.pathsep):
        if folder and os.path.isfile(os.path.join(folder, name)):
            raise CommandNotRunnable(f"{name}: Permission denied", 126)
    raise CommandNotRunnable(f"{name}: command not found", 127)


@dataclasses.dataclass
class JobOutcome:
    """How the command ended, and what the wrapper did about it."""

    returncode: int  # as subprocess gives it: negative = killed by that signal
    exit_status: int  # as a shell gives it: 128 + signal when killed
    signal: Optional[str]
    ended_by: str  # exit | signal (from outside) | interrupted (forwarded from the user) | hang (stopped by --hang-timeout)
    duration_s: float
    forwarded: List[str]
    decisive: Optional[str]  # the first decisive error seen in the live output (with --hang-timeout)
    leftovers: List[procs.ProcessInfo]  # still running after the command ended (left alone)
    killed: List[procs.ProcessInfo]  # killed by the wrapper after a stop (SIGKILL)
    output: OutputStats
    terminals: List[str]  # streams given a pseudo-terminal
    pgid: int = 0  # the job's process group


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class Job:
    """One run of one command. `run()` blocks until it is over and returns the JobOutcome."""

    def __init__(self, argv: List[str], env: Dict[str, str], recorder: OutputRecorder, run_id: str,
                 hang_timeout: Optional[float] = None, kill_after: float = 10.0, use_pty: bool = True,
                 stdout_fd: int = 1, stderr_fd: int = 2, notify: Callable[[str], None] = lambda text: None,
                 texts: Optional[Dict[str, Callable[..., str]]] = None) -> None:
        self.argv = argv
        self.env = dict(env, **{procs.MARKER: run_id})
        self.recorder = recorder
        self.run_id = run_id
        self.hang_timeout = hang_timeout
        self.kill_after = kill_after
        self.use_pty = use_pty
        self.targets: Dict[int, Optional[int]] = {1: stdout_fd, 2: stderr_fd}
        self.notify = notify
        self.texts = texts or {}
        self.watcher: Optional[DecisiveWatcher] = None  # only with a hang timeout
        self.proc: Optional[subprocess.Popen] = None
        self.pgid = 0
        self.returncode: Optional[int] = None
        self.started = self.exited_at = self.last_output = 0.0
        self.stopping = False
        self.ended_by = ""
        self.stop_requests = 0
        self.forwarded: List[str] = []
        self.kill_at: Optional[float] = None  # SIGKILL what is left of the job at this time
        self.killed: List[procs.ProcessInfo] = []
        self.masters: List[int] = []  # pseudo-terminal masters (to resize)
        self.readers: Dict[int, int] = {}  # our read end → stream (1 stdout, 2 stderr)
        self.terminals: List[str] = []
        self._next_scan = 0.0
        self._saved_handlers: Dict[int, object] = {}
        self._early: List[int] = []  # stop signals that came before the child existed

    # -- start ------------------------------------------------------------------------------------
    def _stream(self, stream: int) -> Tuple[int, int]:
        """(our read end, the child's write end) for stdout (1) or stderr (2)."""
        target = self.targets[stream]
        if self.use_pty and target is not None and _isatty(target):
            import tty

            master, slave = os.openpty()
            tty.setraw(slave)  # the child's bytes reach us as it wrote them
            _copy_window_size(target, slave)
            self.masters.append(master)
            self.terminals.append("stdout" if stream == 1 else "stderr")
            return master, slave
        read_end, write_end = os.pipe()
        try:
            import fcntl

            fcntl.fcntl(write_end, F_SETPIPE_SZ, PIPE_SIZE)
        except (ImportError, OSError):
            pass  # not Linux, or over the user's pipe-max-size: the default pipe works too
        return read_end, write_end

    def _spawn(self) -> None:
        child_ends = []
        try:
            for stream in (1, 2):
                read_end, write_end = self._stream(stream)
                self.readers[read_end] = stream
                child_ends.append(write_end)
            try:
                self.proc = subprocess.Popen(self.argv, stdout=child_ends[0], stderr=child_ends[1], env=self.env,
                                             start_new_session=True, close_fds=True)
            except FileNotFoundError:
                raise CommandNotRunnable(f"{self.argv[0]}: command not found", 127) from None
            except PermissionError:
                raise CommandNotRunnable(f"{self.argv[0]}: Permission denied", 126) from None
            except OSError as exc:
                raise CommandNotRunnable(f"{self.argv[0]}: cannot execute: {exc.strerror or exc}", 126) from None
        except BaseException:
            for fd in self.readers:
                _close(fd)
            raise
        finally:
            for fd in child_ends:
                _close(fd)
        self.pgid = self.proc.pid
        self.started = self.last_output = time.monotonic()

    # -- signals ----------------------------------------------------------------------------------
    def _install_handlers(self) -> None:
        wanted = list(STOP_SIGNALS) + [signal.SIGTSTP, signal.SIGCONT, signal.SIGWINCH]
        try:
            for signum in wanted:
                self._saved_handlers[signum] = signal.signal(signum, self._on_signal)
        except ValueError:
            # Not the main thread: signals cannot be caught here (the caller's own handling applies).
            self._restore_handlers()

    def _restore_handlers(self) -> None:
        for signum, handler in self._saved_handlers.items():
            try:
                signal.signal(signum, handler)  # type: ignore[arg-type]
            except (ValueError, TypeError):
                pass
        self._saved_handlers.clear()

    def _on_signal(self, signum: int, frame) -> None:  # noqa: ARG002 - the signal module's signature
        if self.pgid <= 0:
            if signum in STOP_SIGNALS:
                self._early.append(signum)
            return
        if signum == signal.SIGWINCH:
            for master in self.masters:
                _copy_window_size(self.targets[1] if self.targets[1] is not None else 1, master)
            procs.signal_job(self.pgid, signal.SIGWINCH)
            return
        if signum == signal.SIGTSTP:
            procs.signal_job(self.pgid, signal.SIGTSTP)
            os.kill(os.getpid(), signal.SIGSTOP)
            return
        if signum == signal.SIGCONT:
            procs.signal_job(self.pgid, signal.SIGCONT)
            self.last_output = time.monotonic()  # time spent stopped is not silence
            return
        self.stop_requests += 1
        if self.stop_requests == 1:
            sent = signum
        elif self.stop_requests == 2 and signum == signal.SIGINT:
            sent = signal.SIGTERM
        else:
            sent = signal.SIGKILL
        outside = [p.pid for p in procs.job_processes(self.pgid, self.run_id) if not p.in_group]
        procs.signal_job(self.pgid, sent, outside)
        self.forwarded.append(signal_name(sent))
        self.stopping = True
        if not self.ended_by:
            self.ended_by = "interrupted"
        following = "SIGTERM" if sent == signal.SIGINT else "SIGKILL"
        self._say("forwarded", name=signal_name(sent), pgid=self.pgid, next=following if sent != signal.SIGKILL else "")

    def _say(self, key: str, **values) -> None:
        render = self.texts.get(key)
        if render is not None:
            self.notify(render(**values))

    # -- the loop ---------------------------------------------------------------------------------
    def run(self) -> JobOutcome:
        self._install_handlers()  # before the child exists: a Ctrl-C in between is kept and forwarded
        try:
            self._spawn()
            self.watcher = DecisiveWatcher() if self.hang_timeout else None
            if self.watcher is not None:
                self.recorder.on_block = self.watcher.offer
            for signum in self._early:
                self._on_signal(signum, None)
            selector = selectors.DefaultSelector()
            try:
                for fd, stream in self.readers.items():
                    selector.register(fd, selectors.EVENT_READ, stream)
                self._pump(selector)
            finally:
                selector.close()
                for fd in list(self.readers):
                    self._close_reader(fd)
                stats = self.recorder.finish()
            leftovers = self._after_exit()
        finally:
            self._restore_handlers()
        return self._outcome(stats, leftovers)

    def _pump(self, selector: selectors.BaseSelector) -> None:
        next_tick = 0.0
        while self.readers or self.returncode is None:
            events = selector.select(TICK) if self.readers else _sleep(TICK)
            got = 0
            for key, _ in events:
                data = _read(key.fd)
                got += len(data)
                if data:
                    self.last_output = time.monotonic()
                    if self._pass_through(key.data, data):
                        self.recorder.feed(key.data, data)
                        continue
                selector.unregister(key.fd)
                self._close_reader(key.fd)
            watcher = self.watcher
            if (watcher is not None and watcher.pending and self.returncode is None
                    and time.monotonic() - self.last_output >= QUIET):
                watcher.work(WATCH_SLICE)  # the output went quiet: was its end a decisive error?
            elif 0 < got < COALESCE_BYTES:
                time.sleep(COALESCE_WAIT)
            now = time.monotonic()
            if now >= next_tick:
                next_tick = now + TICK
                if self._tick(now):
                    return

    def _close_reader(self, fd: int) -> None:
        self.readers.pop(fd, None)
        if fd in self.masters:
            self.masters.remove(fd)
        _close(fd)

    def _tick(self, now: float) -> bool:
        """Child exit, hang, kill deadline. True: stop reading (the command is over, its leftovers quiet)."""
        assert self.proc is not None
        if self.returncode is None:
            code = self.proc.poll()
            if code is not None:
                self.returncode, self.exited_at = code, now
                if self.stopping and self.kill_at is None:
                    self.kill_at = now + self.kill_after  # leftovers of a stopped job get the grace, then SIGKILL
        if self.returncode is None:
            self._check_hang(now)
            if self.kill_at is not None and now >= self.kill_at:
                self._kill_rest()
            return False
        if self.stopping:
            if now >= self._next_scan:
                self._next_scan = now + 0.2
                if not procs.job_processes(self.pgid, self.run_id):
                    return now - self.last_output >= 0.2
                if self.kill_at is not None and now >= self.kill_at:
                    self._kill_rest()
            return now - self.exited_at >= self.kill_after + DRAIN_MAX
        return now - max(self.exited_at, self.last_output) >= DRAIN_QUIET or now - self.exited_at >= DRAIN_MAX

    def _check_hang(self, now: float) -> None:
        found = self.watcher.found if self.watcher is not None else None
        if found is None or self.stopping or not self.hang_timeout:
            return
        if now - self.last_output < self.hang_timeout:
            return
        self.stopping = True
        self.ended_by = "hang"
        self._say("hang", seconds=self.hang_timeout, line=found[1], kill_after=self.kill_after)
        procs.signal_job(self.pgid, signal.SIGTERM,
                         [p.pid for p in procs.job_processes(self.pgid, self.run_id) if not p.in_group])
        self.forwarded.append("SIGTERM")
        self.kill_at = now + self.kill_after

    def _kill_rest(self) -> None:
        left = procs.job_processes(self.pgid, self.run_id)
        if left:
            procs.signal_job(self.pgid, signal.SIGKILL, [p.pid for p in left if not p.in_group])
            known = {p.pid for p in self.killed}
            self.killed.extend(p for p in left if p.pid not in known)
            self._say("killed", count=len(left), seconds=self.kill_after)
        self.kill_at = None

    def _pass_through(self, stream: int, data: bytes) -> bool:
        """Write `data` to our stream. False when our reader went away: the caller then closes the
        child's side, so the child meets the same broken pipe on its next write."""
        target = self.targets.get(stream)
        if target is None:
            return True  # our terminal is gone (hang-up): keep recording
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(target, view):]
            except BlockingIOError:
                _wait_writable(target)
            except InterruptedError:
                continue
            except BrokenPipeError:
                self.targets[stream] = None
                return False
            except OSError:
                self.targets[stream] = None
                return True
        return True

    # -- the end ----------------------------------------------------------------------------------
    def _after_exit(self) -> List[procs.ProcessInfo]:
        assert self.proc is not None
        if self.returncode is None:
            self.returncode = self.proc.wait()
            self.exited_at = time.monotonic()
        if self.stopping:
            grace = max(0.0, (self.kill_at or time.monotonic()) - time.monotonic())
            killed = procs.end_job(self.pgid, self.run_id, grace)
            known = {p.pid for p in self.killed}
            self.killed.extend(p for p in killed if p.pid not in known)
            return []
        return procs.job_processes(self.pgid, self.run_id)

    def _outcome(self, stats: OutputStats, leftovers: List[procs.ProcessInfo]) -> JobOutcome:
        code = self.returncode if self.returncode is not None else -signal.SIGKILL
        name = signal_name(-code) if code < 0 else None
        ended_by = self.ended_by or ("signal" if code < 0 else "exit")
        return JobOutcome(
            returncode=code, exit_status=128 - code if code < 0 else code, signal=name, ended_by=ended_by,
            duration_s=round((self.exited_at or time.monotonic()) - self.started, 3), forwarded=self.forwarded,
            decisive=self.watcher.found[1] if self.watcher is not None and self.watcher.found else None,
            leftovers=leftovers, killed=self.killed, output=stats, terminals=self.terminals, pgid=self.pgid)


# -- small helpers ------------------------------------------------------------------------------

def _read(fd: int) -> bytes:
    while True:
        try:
            return os.read(fd, READ_SIZE)
        except InterruptedError:
            continue
        except OSError as exc:
            if exc.errno == errno.EIO:  # a pseudo-terminal whose other end is closed: end of output
                return b""
            raise


def _sleep(seconds: float) -> list:
    time.sleep(seconds)
    return []


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _wait_writable(fd: int) -> None:
    import select

    select.select([], [fd], [], 1.0)


def _copy_window_size(source: int, target: int) -> None:
    """The terminal's rows and columns onto the child's pseudo-terminal (progress bars size to it)."""
    try:
        import fcntl
        import termios

        size = fcntl.ioctl(source, termios.TIOCGWINSZ, b"\0" * 8)
        fcntl.ioctl(target, termios.TIOCSWINSZ, size)
    except (ImportError, OSError):
        pass
