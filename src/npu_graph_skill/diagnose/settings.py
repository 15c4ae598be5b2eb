"""Settings in a paste: the variables a launch script exports, an env dump, `npu-graph env` and
`collect_env.py` blocks, and the options of a command line or a printed engine config.

Users paste their launch script above the error; the setting that caused the failure is often
there (`ASCEND_LAUNCH_BLOCKING=1`, `cudagraph_mode: FULL_DECODE_ONLY` with a speculative method,
`--enforce-eager`, capture sizes). Patterns weigh on them with `env` and `setting` matchers.

- variables: UPPER_CASE names of the families that steer torch_npu, CANN, HCCL, vLLM, SGLang,
  written as `export X=1`, `X=1 cmd`, `X=1` on its own line (env dumps, `npu-graph env`) or
  `os.environ["X"] = "1"`;
- settings: `--long-option [value]` (a JSON value is flattened: `compilation_config.cudagraph_mode`
  and the leaf key `cudagraph_mode`), and the graph-mode keys of printed configs and Python calls
  (`cudagraph_mode=FULL_DECODE_ONLY`, `"cudagraph_capture_sizes": [1, 2, 4]`, `mode="reduce-overhead"`).
Names are normalised to snake case; the first value seen wins; values are cut at 200 characters.
A variable or option that advice words lead into ("try setting X=...", "To disable, set X=0", "please
set", "you can add --x") is suggested, not set: error messages and replies name settings the run did not have.
"""
from __future__ import annotations

import json
import re
from typing import Dict, Iterable

ENV_FAMILIES = r"(?:ASCEND|HCCL|TORCH|PYTORCH|VLLM|SGLANG|ACL|INDUCTOR|TORCHINDUCTOR|TASK_QUEUE|CUDA|NPU|ATB|LCCL|MINDIE|OMP|TNG)"
ENV_ASSIGN = re.compile(
    r"(?:^|[\s;(`'\"])(?:export\s+|set\s+|ENV\s+)?(?P<name>" + ENV_FAMILIES + r"[A-Z0-9_]*)\s*=\s*(?P<value>\"[^\"\n]{0,200}\"|'[^'\n]{0,200}'|[^\s;,'\"`)]{0,200})")
ENVIRON_ASSIGN = re.compile(
    r"os\.environ(?:\[\s*[\"'](?P<name>\w{1,80})[\"']\s*\]\s*=|\.setdefault\(\s*[\"'](?P<name2>\w{1,80})[\"']\s*,)\s*[\"'](?P<value>[^\"'\n]{0,200})")
OPTION = re.compile(
    r"(?<![\w-])--(?P<name>[a-z][a-z0-9]{0,40}(?:[-_][a-z0-9]{1,40}){0,8})"
    r"(?:[ =]{1,8}(?P<value>'[^'\n]{0,2000}'|\"[^\"\n]{0,2000}\"|\{[^}\n]{0,2000}\}|(?!-)[^\s\\'\"]{1,200}))?")
# Keys of graph mode in printed configs, dicts and keyword arguments (vLLM, vLLM-Ascend, SGLang, TorchAir, torch.compile).
GRAPH_KEYS = (
    "enforce_eager", "cudagraph_mode", "cudagraph_capture_sizes", "max_cudagraph_capture_size", "cuda_graph_sizes",
    "full_cuda_graph", "use_cudagraph", "use_inductor", "compilation_config", "torchair_graph_config",
    "graph_batch_sizes", "use_cached_graph", "enable_multistream_moe", "speculative_config", "num_speculative_tokens",
    "disable_cuda_graph", "cuda_graph_max_bs", "cuda_graph_bs", "enable_torch_compile", "torch_compile_max_bs",
    "tensor_parallel_size", "data_parallel_size", "pipeline_parallel_size", "enable_expert_parallel",
    "max_num_seqs", "max_model_len", "max_num_batched_tokens", "kv_cache_dtype", "quantization",
    "decode_context_parallel_size", "async_scheduling", "enable_prefix_caching", "enable_chunked_prefill",
)
KEY_VALUE = re.compile(
    r"[\"']?\b(?P<name>" + "|".join(GRAPH_KEYS) + r"|mode|backend|method)\b[\"']?\s*[:=]\s*"
    r"(?P<value>\[[^\]\n]{0,400}\]|\"[^\"\n]{0,200}\"|'[^'\n]{0,200}'|<[^>\n]{0,80}>|[\w.+-]{1,80})")
# `mode` / `backend` / `method` are too common alone; they count in a call or config that names graph mode.
GENERIC_KEYS = {"mode": re.compile(r"torch\.compile|torchair|npugraph|reduce-overhead|max-autotune|compile_mode|CompilerConfig", re.I),
                "backend": re.compile(r"torch\.compile|npugraph|torchair|inductor", re.I),
                "method": re.compile(r"speculative|mtp|eagle|draft", re.I)}
MAX_VALUE = 200
# Words that make what follows advice, not a setting of the run: torch's CUDA out-of-memory message ends "try
# setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation", vLLM's memory-profiling
# line (S-170) "To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0", a maintainer's
# "please set ...". ("I tried setting X=1" is the user's own run: "tried" is not "try".)
ADVICE_BEFORE = re.compile(
    r"\b(?:try|trying|consider|considering|please|recommend|recommended|suggest|suggested"
    r"|(?:you|we) (?:can|may|could|should|might)|to (?:disable|enable|avoid|fix|reduce|use) [^.;,]{0,30}?|to (?:disable|enable),?)"
    r"\s{1,3}(?:setting|set|using|use|export|exporting|passing|pass|adding|add)?\s{0,3}$", re.IGNORECASE)
ADVICE_WINDOW = 60  # characters before the name that can make it advice


def _advice(line: str, start: int) -> bool:
    """The assignment or option at `start` of `line` is suggested by the text before it, not set."""
    return bool(ADVICE_BEFORE.search(line[max(0, start - ADVICE_WINDOW):start]))


def normalise(name: str) -> str:
    return name.strip().lower().replace("-", "_")


def _unquote(value: str) -> str:
    value = (value or "").strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return value


def _put(settings: Dict[str, str], name: str, value: str) -> None:
    settings.setdefault(normalise(name), value[:MAX_VALUE])


def parse_env(lines: Iterable[str], env: Dict[str, str]) -> None:
    """Variables assigned in the text, into `env` (first value wins)."""
    for line in lines:
        if "=" not in line:
            continue
        for match in ENV_ASSIGN.finditer(line):
            if not _advice(line, match.start("name")):
                env.setdefault(match["name"], _unquote(match["value"])[:MAX_VALUE])
        if "environ" in line:
            for match in ENVIRON_ASSIGN.finditer(line):
                env.setdefault(match["name"] or match["name2"], match["value"][:MAX_VALUE])


def parse_settings(lines: Iterable[str], settings: Dict[str, str]) -> None:
    """Command-line options and graph-mode config keys, into `settings` (first value wins)."""
    for line in lines:
        if "--" in line:
            for match in OPTION.finditer(line):
                if _advice(line, match.start()):
                    continue
                value = _unquote(match["value"]) if match["value"] else "true"
                _put(settings, match["name"], value)
                if value.startswith("{"):
                    _flatten_json(settings, normalise(match["name"]), value)
        if ":" in line or "=" in line:
            for match in KEY_VALUE.finditer(line):
                name = match["name"]
                if name in GENERIC_KEYS and not GENERIC_KEYS[name].search(line):
                    continue
                _put(settings, name, _unquote(match["value"]))


def _flatten_json(settings: Dict[str, str], prefix: str, text: str) -> None:
    try:
        data = json.loads(text)
    except ValueError:
        try:
            data = json.loads(text.replace("'", '"'))
        except ValueError:
            return
    if isinstance(data, dict):
        _walk(settings, prefix, data, depth=0)


def _walk(settings: Dict[str, str], prefix: str, data: dict, depth: int) -> None:
    for key, value in list(data.items())[:100]:
        name = f"{prefix}.{normalise(str(key))}"
        if isinstance(value, dict) and depth < 3:
            _walk(settings, name, value, depth + 1)
            continue
        text = json.dumps(value) if isinstance(value, (list, bool)) or value is None else str(value)
        _put(settings, name, text)
        if normalise(str(key)) in GRAPH_KEYS:  # `cudagraph_mode` alone, whatever option carried it
            _put(settings, str(key), text)
