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
