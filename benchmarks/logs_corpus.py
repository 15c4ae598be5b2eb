"""A realistic mixed log for the log-analyzer benchmark and tests: the stderr of a multi-rank
vLLM-Ascend server run with `TORCH_NPU_LOGS=+memory,+dispatch,+aclgraph,acl` and
`ASCEND_SLOG_PRINT_TO_STDOUT=1`, i.e. every layout of shared/reference/formats.md interleaved.

The line layouts and message texts come from formats.md (§1.3–1.6 TORCH_NPU_LOGS catalogue, §2 plog,
§3 torch_npu exceptions, §5 vLLM); only the values (pids, sizes, pointers, times) are generated.
Errors come at a realistic rate (a few per 100k lines, mostly benign or warnings) and one real
failure — by default the text of a public report — is planted at `failure_at` of the file, on rank 1,
followed by the HCCL timeouts other ranks report as its consequence.
"""
from __future__ import annotations

import os
import random
from typing import List, Optional

# vllm-ascend-2629 (https://github.com/vllm-project/vllm-ascend/issues/2629): capture start fails, SQ/CQ exhausted.
DEFAULT_FAILURE = """\
(Worker_TP1 pid={pid}) ERROR {vdate} [multiproc_executor.py:632]   File "/usr/local/python3.10/site-packages/torch_npu/npu/graphs.py", line 210, in capture_begin
(Worker_TP1 pid={pid}) ERROR {vdate} [multiproc_executor.py:632]     super().capture_begin(pool=pool, capture_error_mode=capture_error_mode)
(Worker_TP1 pid={pid}) ERROR {vdate} [multiproc_executor.py:632] RuntimeError: capture_begin:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:156 NPU function error: c10_npu::acl::AclmdlRICaptureBegin(capture_stream_, capture_mode), error code is 207005
(Worker_TP1 pid={pid}) ERROR {vdate} [multiproc_executor.py:632] [ERROR] {pdate} (PID:{pid}, Device:1, RankID:-1) ERR00100 PTA call acl api failed
(Worker_TP1 pid={pid}) ERROR {vdate} [multiproc_executor.py:632] [Error]: Failed to apply for memory.
(Worker_TP1 pid={pid}) ERROR {vdate} [multiproc_executor.py:632]         Check the remaining storage space in the hardware environment.
(Worker_TP1 pid={pid}) ERROR {vdate} [multiproc_executor.py:632] EL0006: [PID: {pid}] {pdate}.691.093 The resources are insufficient.
(Worker_TP1 pid={pid}) ERROR {vdate} [multiproc_executor.py:632]         Solution: Close applications not in use.
(Worker_TP1 pid={pid}) ERROR {vdate} [multiproc_executor.py:632]         TraceBack (most recent call last):
(Worker_TP1 pid={pid}) ERROR {vdate} [multiproc_executor.py:632]         [SqCqManage]Alloc sq cq fail, stream_id=1984, retCode=0x7020023.[FUNC:AllocStreamSqCq][FILE:stream_sqcq_manage.cc][LINE:78]
(Worker_TP1 pid={pid}) ERROR {vdate} [multiproc_executor.py:632]         rtStreamBeginCapture execute failed, reason=[driver error:resource alloc fail][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]
(Worker_TP1 pid={pid}) ERROR {vdate} [multiproc_executor.py:632]         begin capture stream failed, runtime result = 207005[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:161]"""

OPS = ("aclnnMatmul", "aclnnAdd", "aclnnMul", "aclnnRmsNorm", "aclnnSilu", "aclnnInplaceCopy", "aclnnFusedInferAttentionScore")
ACL_APIS = ("aclrtMemcpyAsync(dst=0x{p:x}, destMax={n}, src=0x{q:x}, count={n}, kind=1, stream=0x{s:x})",
            "aclrtLaunchCallback(fn=0x{p:x}, userData=0x{q:x}, blockType=1, stream=0x{s:x})",
            "aclrtSetDevice(deviceId={d})")


class _Clock:
    """Local time advancing a little per line: the layouts print it their own way."""

    def __init__(self, start: float = 1754521700.0):
        self.now = start

    def tick(self, seconds: float) -> None:
        self.now += seconds

    def parts(self):
        import time as _t

        whole = int(self.now)
        tm = _t.gmtime(whole)
        micro = int((self.now - whole) * 1e6)
        return tm, micro


def _plog_time(tm, micro):
    return "%04d-%02d-%02d-%02d:%02d:%02d.%03d.%03d" % (tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min,
                                                     tm.tm_sec, micro // 1000, micro % 1000)


def _g2_time(tm, micro):
    return "%04d-%02d-%02d %02d:%02d:%02d:%03d" % (tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                                                   micro // 1000)


def _glog_time(tm, micro):
    return "%02d%02d %02d:%02d:%02d.%06d" % (tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, micro)


def _vllm_time(tm):
    return "%02d-%02d %02d:%02d:%02d" % (tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec)


def _pta_time(tm):
    return "%04d-%02d-%02d-%02d:%02d:%02d" % (tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec)


class MixedLog:
    """Writes the mixed log line by line; `ranks` worker processes share one stream."""

    def __init__(self, seed: int = 7, ranks: int = 4):
        self.rng = random.Random(seed)
        self.clock = _Clock()
        self.ranks = ranks
        self.pids = [29930 + r for r in range(ranks)]
        self.model_ri = [0x5645F200 + 0x1000 * r for r in range(ranks)]
        self.cached = [2 << 30] * ranks
        self.allocated = [1 << 30] * ranks

    # -- noise, by layout ----------------------------------------------------------------------
    def noise(self) -> str:
        rng = self.rng
        r = rng.randrange(self.ranks)
        pid = self.pids[r]
        self.clock.tick(rng.random() * 0.0004)
        tm, micro = self.clock.parts()
        pick = rng.random()
        if pick < 0.30:  # G2 memory DEBUG (formats.md §1.5 memory)
            size = rng.choice((512, 1024, 4096, 65536, 2097152, 20971520))
            if rng.random() < 0.5:
                self.allocated[r] += size
                self.cached[r] = max(self.cached[r], self.allocated[r])
                msg = rng.choice((f"Allocating memory: size={size}, device={r}",
                                  f"Rounded size: {size}, alloc size: 2097152, using small pool on device {r}",
                                  f"PTA CachingAllocator malloc: malloc = {size}, cached = {self.cached[r]}, allocated = {self.allocated[r]}"))
            else:
                self.allocated[r] = max(0, self.allocated[r] - size)
                msg = rng.choice((f"Freeing memory block: size={size}, ptr=0x{rng.getrandbits(44):x}, device={r}",
                                  f"PTA CachingAllocator free: free = {size}, cached = {self.cached[r]}, allocated = {self.allocated[r]}"))
            return f"[rank:{r}]:[{pid}] [{_g2_time(tm, micro)}] torch_npu.memory: [DEBUG] [{pid}] {msg}"
        if pick < 0.45:  # G2 dispatch (§1.5 dispatch)
            msg = rng.choice((f"ExecFuncOpApi: Op {rng.choice(OPS)} Run.",
                              f"Enqueue: start, {rng.choice(OPS)}, device = {r}, write_idx = {rng.randrange(4096)}, read_idx = {rng.randrange(4096)}, status = 0",
                              f"enQueue duration is (ns): {rng.randrange(2000, 90000)}"))
            return f"[rank:{r}]:[{pid}] [{_g2_time(tm, micro)}] torch_npu.dispatch: [DEBUG] [{pid + 7}] {msg}"
        if pick < 0.62:  # plog mirror of torch_npu lines (§2.4) and runtime INFO/DEBUG
            api = rng.choice(ACL_APIS).format(p=rng.getrandbits(44), q=rng.getrandbits(44), s=rng.getrandbits(44),
                                              n=rng.choice((64, 4096, 65536)), d=r)
            return (f"[INFO] APP({pid},python):{_plog_time(tm, micro)} [log_inner.cpp:87]{pid} "
                    f"operator():AclInterface.cpp:1186: \"[PTA]:\"[ACL CALL] {api}\"\"")
        if pick < 0.76:  # G3 replay + acl call (§1.3 constructed layout)
            if rng.random() < 0.5:
                return (f"V{_glog_time(tm, micro)} {pid} torch_npu/csrc/core/npu/NPUGraph.cpp:393] [rank:{r}] "
                        f"NPUGRAPH Replay model_ri=0x{self.model_ri[r]:x}, device={r}")
            return (f"I{_glog_time(tm, micro)} {pid} torch_npu/csrc/core/npu/interface/AclInterface.cpp:1186] [rank:{r}] "
                    f"[ACL CALL] aclmdlRIExecuteAsync(modelRI=0x{self.model_ri[r]:x}, stream=0x{rng.getrandbits(32):x})")
        if pick < 0.86:  # vLLM worker INFO lines (§5)
            return (f"(EngineCore_DP0 pid=29900) (Worker_TP{r} pid={pid}) INFO {_vllm_time(tm)} [loggers.py:123] "
                    f"Engine 000: Avg prompt throughput: {rng.random() * 900:.1f} tokens/s, Avg generation throughput: "
                    f"{rng.random() * 300:.1f} tokens/s, Running: {rng.randrange(1, 64)} reqs, Waiting: 0 reqs, "
                    f"GPU KV cache usage: {rng.random() * 90:.1f}%, Prefix cache hit rate: 0.0%")
        if pick < 0.9999:  # plog DEBUG runtime noise
            return (f"[DEBUG] RUNTIME({pid},python):{_plog_time(tm, micro)} [stream.cc:1254]{pid + 11} "
                    f"ExecuteAsync:[EXEC][DEFAULT]stream_id={rng.randrange(2, 64)}, task_id={rng.randrange(65536)}")
        # the rare warnings and benign errors a healthy run prints (§1.3, §1.6)
        if rng.random() < 0.5:
            return (f"[rank{r}]:[W{tm.tm_mon}{tm.tm_mday:02d} {tm.tm_hour:02d}:{tm.tm_min:02d}:{tm.tm_sec:02d}.{micro:06d}000 "
                    f"compiler_depend.ts:187] Warning: Waiting for pending NCCL work to finish before starting graph capture. "
                    f"(function operator())")
        return (f"[rank:{r}]:[{pid}] [{_g2_time(tm, micro)}] torch_npu.memory: [ERROR] [{pid}] Get a block from the existing "
                f"pool failed. Try to free cached blocks and reallocate. This error log can be ignored.")

    # -- graph lifecycle at start-up -----------------------------------------------------------
    def startup(self, graphs: int = 11, capture_s: float = 1.9) -> List[str]:
        lines = []
        for r in range(self.ranks):
            tm, micro = self.clock.parts()
            lines.append(f"(EngineCore_DP0 pid=29900) (Worker_TP{r} pid={self.pids[r]}) INFO {_vllm_time(tm)} "
                         f"[backends.py:218] Compiling a graph for dynamic shape takes {12.5 + r:.2f} s")
        for g in range(graphs):
            for r in range(self.ranks):
                pid = self.pids[r]
                tm, micro = self.clock.parts()
                lines.append(f"V{_glog_time(tm, micro)} {pid} torch_npu/csrc/core/npu/NPUGraph.cpp:212] [rank:{r}] NPUGRAPH Capture begin")
                self.clock.tick(capture_s * (1.0 + 0.1 * self.rng.random()))
                tm, micro = self.clock.parts()
                lines.append(f"V{_glog_time(tm, micro)} {pid} torch_npu/csrc/core/npu/NPUGraph.cpp:250] [rank:{r}] "
                             f"NPUGRAPH Capture end done: model_ri=0x{self.model_ri[r] + g:x}, has_graph_exec=1")
        for r in range(self.ranks):
            tm, micro = self.clock.parts()
            lines.append(f"(EngineCore_DP0 pid=29900) (Worker_TP{r} pid={self.pids[r]}) INFO {_vllm_time(tm)} "
                         f"[model_runner_v1.py:3607] Graph capturing finished in {int(graphs * capture_s)} secs, took 0.26 GiB")
        return lines

    # -- the failure and its consequences ------------------------------------------------------
    def failure(self, text: Optional[str] = None) -> List[str]:
        tm, micro = self.clock.parts()
        fail = (text or DEFAULT_FAILURE).format(pid=self.pids[1], vdate=_vllm_time(tm), pdate=_pta_time(tm))
        lines = fail.splitlines()
        self.clock.tick(130.0)  # the others wait for the HCCL timeout
        for r in range(self.ranks):
            if r == 1:
                continue
            tm, micro = self.clock.parts()
            pid = self.pids[r]
            lines.append(f"[ERROR] HCCL({pid},python3):{_plog_time(tm, micro)} [hccl_socket_manager.cc:778] [{pid + 5}]"
                         f"[Wait][LinkEstablish]wait socket establish timeout, role[1] rank[{r}] timeout[130]")
            lines.append(f"[ERROR] RUNTIME({pid},python3):{_plog_time(tm, micro)} [stream.cc:1102]{pid} "
                         f"SynchronizeImpl:Stream synchronize timeout, runtime result = 107020")
        return lines


def write_mixed_log(path: str, size_mb: float, seed: int = 7, failure_text: Optional[str] = None,
                    failure_at: float = 0.8, ranks: int = 4) -> int:
    """Write about `size_mb` MB; return the number of lines. The failure sits at `failure_at` of the file."""
    log = MixedLog(seed=seed, ranks=ranks)
    target = int(size_mb * 1024 * 1024)
    planted = False
    lines = 0
    written = 0
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        batch = log.startup()
        while written < target or not planted:
            if not planted and written >= target * failure_at:
                batch.extend(log.failure(failure_text))
                planted = True
            for _ in range(2000):
                batch.append(log.noise())
            chunk = "\n".join(batch) + "\n"
            handle.write(chunk)
            written += len(chunk)
            lines += len(batch)
            batch = []
    return lines


if __name__ == "__main__":
    import sys

    out = sys.argv[1] if len(sys.argv) > 1 else "mixed.log"
    size = float(sys.argv[2]) if len(sys.argv) > 2 else 10
    print(write_mixed_log(out, size), "lines ->", out, os.path.getsize(out), "bytes")


# --------------------------------------------------------------------------------------------
# A whole cluster job: one folder per node, one per rank, the files each rank leaves.
# --------------------------------------------------------------------------------------------

# A later decisive error on another rank (formats.md §3.2, https://github.com/vllm-project/vllm-ascend/issues/7676 family:
# the stream synchronisation of a rank whose peer died fails with a vector-core exception code).
ALSO_FAILED = ("(Worker_TP{tp} pid={pid}) ERROR {vdate} [multiproc_executor.py:632] RuntimeError: operator():build/CMakeFiles/"
               "torch_npu.dir/compiler_depend.ts:25 NPU function error: c10_npu::acl::AclrtSynchronizeStreamWithTimeout"
               "(copy_stream), error code is 507035")


def _stamp(seconds: float) -> str:
    import time as _t

    tm = _t.gmtime(int(seconds))
    return "%04d%02d%02d%02d%02d%02d%03d" % (tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                                           int((seconds % 1) * 1000))


# What differs between merging per-node summaries and analysing every file on one machine, by design: who
# read what, how long it took, how the clocks were aligned. Everything else must be identical.
MERGE_VOLATILE = frozenset({"node", "seconds", "mb_per_s", "processes", "nodes", "scan_seconds", "clocks",
                            "clock_uncertainty_s", "too_close", "summary"})


def merge_comparable(data):
    """A logs report without MERGE_VOLATILE keys, for comparing a merged report with the whole-set one."""
    if isinstance(data, dict):
        return {k: merge_comparable(v) for k, v in data.items() if k not in MERGE_VOLATILE}
    if isinstance(data, list):
        return [merge_comparable(v) for v in data]
    return data


def write_cluster_job(root: str, ranks: int = 64, nodes: int = 8, kb_per_rank: float = 24, seed: int = 7,
                      failing_rank: int = 13, also_failing_rank: Optional[int] = 42, skew: Optional[dict] = None,
                      init_jitter: float = 0.02, timeout_jitter: float = 0.05, start: float = 1754521700.0,
                      also_failing_after: float = 140.0) -> dict:
    """A multi-node job as it lies on the nodes when `ASCEND_PROCESS_LOG_PATH` points each rank at its own folder:

        <root>/node03/rank_024/worker.log                  TORCH_NPU_LOGS=+memory,+dispatch,+aclgraph + vLLM worker output
        <root>/node03/rank_024/run/plog/plog-<pid>_<t>.log  CANN run log: the HCCL communicator-init record (§2.1, §2.6)
        <root>/node03/rank_024/debug/plog/plog-<pid>_<t>.log CANN debug log: runtime noise, then HCCL / 107020 timeouts

    `failing_rank` fails first (the vllm-ascend#2629 capture failure); every other rank times out 130 s later (within
    `timeout_jitter`); `also_failing_rank` reports a decisive error of its own 10 s after that. All ranks finish the
    communicator init within `init_jitter` s of each other. `skew` = {node index: seconds} shifts every time a node
    prints (its clock is that far ahead). Returns {"nodes": [folder, ...], "failure_time": t, ...}."""
    rng = random.Random(seed)
    skew = skew or {}
    per_node = ranks // nodes
    init_at = start + 5.0
    fail_at = start + 600.0
    timeout_at = fail_at + 130.0
    folders = []
    for node in range(nodes):
        folder = os.path.join(root, f"node{node:02d}")
        folders.append(folder)
        shift = float(skew.get(node, 0.0))
        for local in range(per_node):
            rank = node * per_node + local
            _write_rank(os.path.join(folder, f"rank_{rank:03d}"), rank, local, ranks, node, rng, shift, kb_per_rank,
                        start, init_at + rng.random() * init_jitter, fail_at,
                        timeout_at + rng.random() * timeout_jitter, failing_rank, also_failing_rank,
                        fail_at + also_failing_after)
    return {"nodes": folders, "failure_time": fail_at, "timeout_time": timeout_at, "ranks": ranks, "per_node": per_node}


def _write_rank(folder: str, rank: int, local: int, world: int, node: int, rng: random.Random, shift: float,
                kb: float, start: float, init_at: float, fail_at: float, timeout_at: float, failing_rank: int,
                also_failing_rank: Optional[int], also_at: float) -> None:
    pid = 20000 + rank * 7
    clock = _Clock(start + shift)
    run_dir = os.path.join(folder, "run", "plog")
    debug_dir = os.path.join(folder, "debug", "plog")
    for path in (run_dir, debug_dir):
        os.makedirs(path, exist_ok=True)
    name = f"plog-{pid}_{_stamp(start + shift)}.log"

    def at(seconds: float):
        clock.now = seconds + shift
        return clock.parts()

    tm, micro = at(init_at)
    with open(os.path.join(run_dir, name), "w", encoding="utf-8", newline="\n") as run:
        run.write(f"[TRACE] HCCL({pid},python3):{_plog_time(tm, micro)} [status:init] [hcom.cc:196][hccl-{pid}-0-"
                  f"{int(init_at)}-hccl_world_group][3]hcom init by file success,take time [1174468]us, rankTablePath"
                  f"[/job/rank_table.json], rankNum[{world}], rank[{rank}],server[10.0.{node}.1], device[{local}]\n")
    worker: List[str] = []
    debug: List[str] = []
    tp = rank  # vLLM names workers by their tensor-parallel rank; here one TP group spans the job
    for graph in range(4):  # start-up: compile, captures (§1.5 aclgraph, §5)
        tm, micro = at(start + 20 + graph * 3)
        worker.append(f"V{_glog_time(tm, micro)} {pid} torch_npu/csrc/core/npu/NPUGraph.cpp:212] [rank:{rank}] NPUGRAPH Capture begin")
        tm, micro = at(start + 21.5 + graph * 3 + rng.random() * 0.2)
        worker.append(f"V{_glog_time(tm, micro)} {pid} torch_npu/csrc/core/npu/NPUGraph.cpp:250] [rank:{rank}] "
                      f"NPUGRAPH Capture end done: model_ri=0x{0x5645F200 + graph:x}, has_graph_exec=1")
    tm, micro = at(start + 40)
    worker.append(f"(Worker_TP{tp} pid={pid}) INFO {_vllm_time(tm)} [model_runner_v1.py:3607] Graph capturing finished in "
                  f"6 secs, took 0.26 GiB")
    budget = kb * 1024
    steps = max(20, int(budget / 150))
    span = fail_at - 60 - (start + 50)
    for step in range(steps):  # steady state: replays, allocator and dispatch lines, runtime noise in plog
        tm, micro = at(start + 50 + span * step / steps)
        pick = rng.random()
        if pick < 0.35:
            worker.append(f"V{_glog_time(tm, micro)} {pid} torch_npu/csrc/core/npu/NPUGraph.cpp:393] [rank:{rank}] "
                          f"NPUGRAPH Replay model_ri=0x5645f200, device={local}")
        elif pick < 0.55:
            worker.append(f"[rank:{rank}]:[{pid}] [{_g2_time(tm, micro)}] torch_npu.memory: [DEBUG] [{pid}] PTA CachingAllocator "
                          f"malloc: malloc = 512, cached = {(2 << 30) + step * 4096}, allocated = {(1 << 30) + step * 512}")
        elif pick < 0.65:
            worker.append(f"[rank:{rank}]:[{pid}] [{_g2_time(tm, micro)}] torch_npu.dispatch: [DEBUG] [{pid + 7}] "
                          f"ExecFuncOpApi: Op {rng.choice(OPS)} Run.")
        elif pick < 0.999:
            debug.append(f"[DEBUG] RUNTIME({pid},python3):{_plog_time(tm, micro)} [stream.cc:1254]{pid + 11} "
                         f"ExecuteAsync:[EXEC][DEFAULT]stream_id={rng.randrange(2, 64)}, task_id={rng.randrange(65536)}")
        else:
            worker.append(f"[rank{rank}]:[W{tm.tm_mon}{tm.tm_mday:02d} {tm.tm_hour:02d}:{tm.tm_min:02d}:{tm.tm_sec:02d}."
                          f"{micro:06d}000 compiler_depend.ts:187] Warning: Waiting for pending NCCL work to finish before "
                          f"starting graph capture. (function operator())")
    if rank == also_failing_rank and also_at < timeout_at:
        tm, micro = at(also_at)
        worker.append(ALSO_FAILED.format(tp=tp, pid=pid, vdate=_vllm_time(tm)))
    elif rank == failing_rank:
        tm, micro = at(fail_at)
        worker.extend(DEFAULT_FAILURE.replace("Worker_TP1", f"Worker_TP{tp}").format(
            pid=pid, vdate=_vllm_time(tm), pdate=_pta_time(tm)).splitlines())
    else:
        tm, micro = at(timeout_at)
        debug.append(f"[ERROR] HCCL({pid},python3):{_plog_time(tm, micro)} [hccl_socket_manager.cc:778] [{pid + 5}]"
                     f"[Wait][LinkEstablish]wait socket establish timeout, role[1] rank[{rank}] timeout[130]")
        tm, micro = at(timeout_at + 0.04)
        debug.append(f"[ERROR] RUNTIME({pid},python3):{_plog_time(tm, micro)} [stream.cc:1102]{pid} "
                     f"SynchronizeImpl:Stream synchronize timeout, runtime result = 107020")
        if rank == also_failing_rank:
            tm, micro = at(also_at)
            worker.append(ALSO_FAILED.format(tp=tp, pid=pid, vdate=_vllm_time(tm)))
    with open(os.path.join(folder, "worker.log"), "w", encoding="utf-8", newline="\n") as handle:
        handle.write("\n".join(worker) + "\n")
    with open(os.path.join(debug_dir, name), "w", encoding="utf-8", newline="\n") as handle:
        handle.write("\n".join(debug) + "\n")
