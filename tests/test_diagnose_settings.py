"""Settings pasted above an error are evidence: exported variables, env dumps, command-line options,
JSON configs and printed engine configs."""
from __future__ import annotations

from npu_graph_skill.diagnose.engine import diagnose
from npu_graph_skill.diagnose.evidence import extract_evidence

LAUNCH = """export HCCL_OP_EXPANSION_MODE="AIV"
export ASCEND_LAUNCH_BLOCKING=1
VLLM_USE_V1=1 vllm serve /data/m --tensor-parallel-size 4 --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY", "cudagraph_capture_sizes": [1,2,4]}' \\
  --speculative-config '{"method":"qwen3_next_mtp","num_speculative_tokens":2}' --enforce-eager --port 8000
"""


def test_launch_script_variables_and_options():
    evidence = extract_evidence(LAUNCH)
    assert evidence.env["HCCL_OP_EXPANSION_MODE"] == "AIV"
    assert evidence.env["ASCEND_LAUNCH_BLOCKING"] == "1"
    assert evidence.env["VLLM_USE_V1"] == "1"
    settings = evidence.settings
    assert settings["cudagraph_mode"] == settings["compilation_config.cudagraph_mode"] == "FULL_DECODE_ONLY"
    assert settings["cudagraph_capture_sizes"] == "[1, 2, 4]"
    assert settings["speculative_config.method"] == "qwen3_next_mtp"
    assert settings["tensor_parallel_size"] == "4"
    assert settings["enforce_eager"] == "true"  # a flag without a value
    assert settings["port"] == "8000"


def test_env_dumps_python_assignments_and_printed_configs():
    text = """ENV Variables:
PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:256
os.environ["TASK_QUEUE_ENABLE"] = "2"
INFO 11-06 [core.py:70] Initializing a V1 LLM engine with config: model='x', enforce_eager=False, compilation_config={"level":3,"cudagraph_mode":[2,1]}
model = torch.compile(model, backend="npugraph_ex", mode="reduce-overhead")
"""
    evidence = extract_evidence(text)
    assert evidence.env == {"PYTORCH_NPU_ALLOC_CONF": "max_split_size_mb:256", "TASK_QUEUE_ENABLE": "2"}
    assert evidence.settings["enforce_eager"] == "False"
    assert evidence.settings["backend"] == "npugraph_ex" and evidence.settings["mode"] == "reduce-overhead"


def test_words_that_only_look_like_settings_are_not():
    evidence = extract_evidence("the mode was wrong and the backend is down; MY_VAR=1 is not ours; --> arrow")
    assert "mode" not in evidence.settings and "backend" not in evidence.settings
    assert evidence.env == {}


def test_a_setting_an_error_message_or_a_reply_suggests_is_not_one_of_the_run():
    # torch's out-of-memory message (c10/cuda/CUDACachingAllocator.cpp) and a maintainer's advice name settings
    # the run did not have; the user's own "I tried setting" and the launch line did set theirs
    text = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. If reserved but unallocated memory "
            "is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n"
            "maintainer: please set TASK_QUEUE_ENABLE=0, or you can add --enforce-eager to run eagerly\n"
            "I tried setting ASCEND_LAUNCH_BLOCKING=1 as well\n"
            "HCCL_BUFFSIZE=400 vllm serve /data/m --max-num-seqs 8\n")
    evidence = extract_evidence(text)
    assert evidence.env == {"ASCEND_LAUNCH_BLOCKING": "1", "HCCL_BUFFSIZE": "400"}
    assert "enforce_eager" not in evidence.settings and evidence.settings["max_num_seqs"] == "8"


def test_a_setting_in_the_launch_script_moves_the_diagnosis():
    error = ("RuntimeError: replay:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:361 NPU function error: "
             "c10_npu::acl::AclmdlRIExecuteAsync(model_ri_, stream), error code is 507011")
    without = diagnose(text=error, lang="en")
    with_setting = diagnose(text="export ASCEND_LAUNCH_BLOCKING=1\n" + error, lang="en")
    assert with_setting.candidates[0].id == "P-ENV-003" != without.candidates[0].id
