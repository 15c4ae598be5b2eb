"""The C++ and Python scanners behind `npu-graph code`: function ranges and message sites.

The C++ file (tests/data/code_tree/.../FakeGraph.cpp) is written to trip a naive scanner:
braces in comments, strings, raw strings and char literals, nested namespaces, templates,
operators, a constructor's brace initializers, a signature duplicated across #if branches, a
macro-defined block, a #define whose body raises, messages split over literals, built from
variables, streamed, concatenated and printf-formatted.
"""
from __future__ import annotations

import pathlib

import pytest

from npu_graph_skill.expert.source_cpp import scan_cpp
from npu_graph_skill.expert.source_model import example_pieces, normalize, printf_pieces, render_pieces
from npu_graph_skill.expert.source_python import scan_python

TREE = pathlib.Path(__file__).parent / "data" / "code_tree"
CPP = TREE / "torch_npu" / "csrc" / "core" / "npu" / "FakeGraph.cpp"
HEADER = TREE / "torch_npu" / "csrc" / "core" / "npu" / "FakeGraph.h"
PY = TREE / "torch_npu" / "npu" / "fake_graphs.py"


@pytest.fixture(scope="module")
def cpp():
    functions, sites, calls = scan_cpp(CPP.read_text(encoding="utf-8"))
    return {f.qualname: f for f in functions}, sites, calls


def _site(sites, text):
    found = [s for s in sites if text in s.message]
    assert found, f"no site with {text!r}: {[s.message for s in sites]}"
    return found[0]


def test_cpp_function_ranges_survive_braces_in_comments_strings_and_initializers(cpp):
    functions, _sites, _calls = cpp
    ranges = {name: (f.start, f.end) for name, f in functions.items()}
    assert ranges["c10_npu::detail::checkNotExternal"] == (12, 19)  # after a block comment holding { and }
    assert ranges["c10_npu::Holder::get"] == (23, 26)  # template, Holder<T>:: qualifier
    assert ranges["c10_npu::FakeGraph::FakeGraph"] == (28, 33)  # init list with pool_{0, 0}, "graph {", '{', R"(...)"
    assert ranges["c10_npu::FakeGraph::capture_begin"] == (35, 45)
    assert ranges["c10_npu::FakeGraph::replay"] == (48, 57)  # signature in both #if branches: one range
    assert ranges["c10_npu::FakeGraph::operator=="] == (59, 61)
    assert ranges["c10_npu::operator<<"] == (63, 66)
    assert ranges["c10_npu::FakeGraph::reset"] == (68, 75)  # holds a lambda
    assert ranges["TORCH_LIBRARY_IMPL"] == (79, 81) and functions["TORCH_LIBRARY_IMPL"].kind == "macro"
    assert functions["FAKE_CHECK_ERROR"].kind == "macro" and ranges["FAKE_CHECK_ERROR"] == (5, 6)


def test_cpp_signatures_and_kinds(cpp):
    functions, _sites, _calls = cpp
    begin = functions["c10_npu::FakeGraph::capture_begin"]
    assert begin.signature == "void FakeGraph::capture_begin(MempoolId_t pool, int mode)"
    assert begin.kind == "method"
    assert functions["c10_npu::detail::checkNotExternal"].kind == "function"
    assert functions["c10_npu::Holder::get"].signature.startswith("template <typename T> T Holder<T>::get() const")


def test_cpp_header_classes_and_inline_methods():
    functions, _sites, _calls = scan_cpp(HEADER.read_text(encoding="utf-8"))
    by_name = {f.qualname: f for f in functions}
    assert (by_name["c10_npu::FakeGraph"].kind, by_name["c10_npu::FakeGraph"].start, by_name["c10_npu::FakeGraph"].end) == ("class", 6, 19)
    assert by_name["c10_npu::FakeGraph::id"].start == 9  # inline method, API macro before the class name skipped
    assert by_name["c10_npu::FakeGraph::Inner::value"].start == 16  # nested struct
    assert "c10_npu::FakeGraph::capture_begin" not in by_name  # a declaration is not a definition


def test_cpp_split_literal_is_one_message_with_statement_and_literal_lines(cpp):
    _functions, sites, _calls = cpp
    site = _site(sites, "Fake graphs must be captured on a non-default stream")
    assert site.message == ("Fake graphs must be captured on a non-default stream. "
                            "(However, after capture, it's ok to replay them on the default stream.)")
    assert (site.line, site.end_line, site.message_line, site.kind, site.call) == (36, 40, 38, "check", "TORCH_CHECK")
    assert site.function == "c10_npu::FakeGraph::capture_begin"


def test_cpp_variable_parts_become_placeholders(cpp):
    _functions, sites, _calls = cpp
    helper = _site(sites, "External stream is not supported in")
    assert helper.message == "External stream is not supported in <api_name>. This path requires a torch_npu-managed stream."
    assert helper.error_code == "PTA_ERROR(ErrCode::NOT_SUPPORT)" and helper.forward == "stream,api_name"
    thrown = _site(sites, "FakeGraph reset failed")
    assert (thrown.kind, thrown.call) == ("throw", "std::runtime_error")
    assert thrown.message == "FakeGraph reset failed: <reason_> (code <std::to_string(code_)>)"
    warned = _site(sites, "FakeGraph reset while capturing")
    assert warned.kind == "warn" and warned.message == "FakeGraph reset while capturing on device <device_>; the capture is discarded"
    logged = _site(sites, "FAKEGRAPH Capture begin done")
    assert logged.kind == "log" and logged.message == "FAKEGRAPH Capture begin done: model=<%p>, device=<%d>"


def test_cpp_message_built_in_a_variable_is_followed_back(cpp):
    _functions, sites, _calls = cpp
    site = _site(sites, "Replay failed on device")
    assert site.message == "Replay failed on device <std::to_string(device_)>, see the log above"
    assert (site.line, site.message_line) == (56, 53)


def test_cpp_npu_check_and_internal_assert_read_as_the_user_sees_them(cpp):
    _functions, sites, _calls = cpp
    npu = _site(sites, "NPU function error")
    assert npu.kind == "npu_check"
    assert "NPU function error: c10_npu::acl::AclmdlRICaptureBegin(capture_stream_, mode), error code is" in npu.message
    assertion = _site(sites, "INTERNAL ASSERT FAILED")
    assert assertion.message.startswith("status == CaptureStatus::Active INTERNAL ASSERT FAILED at ")


def test_cpp_macro_body_is_scanned_and_helper_calls_are_recorded(cpp):
    _functions, sites, calls = cpp
    body = _site(sites, "fake function error")
    assert body.function == "FAKE_CHECK_ERROR"
    assert calls == [["detail::checkNotExternal", 41, [None, "FakeGraph::capture_begin"]]]


def test_cpp_scanner_tolerates_unbalanced_and_odd_input():
    functions, sites, _calls = scan_cpp('void f() {\n  TORCH_CHECK(x, "never closed"\n')
    assert [f.qualname for f in functions] == ["f"]
    functions, sites, _calls = scan_cpp('const char* s = "unterminated\n;\nint g() { return 1; }\n/* open comment')
    assert [f.qualname for f in functions] == ["g"]
    assert scan_cpp("") == ([], [], [])


@pytest.fixture(scope="module")
def py():
    functions, sites, error, calls = scan_python(PY.read_text(encoding="utf-8"))
    assert error == ""
    return {f.qualname: f for f in functions}, sites, calls


def test_python_functions_are_class_qualified_with_ranges_and_signatures(py):
    functions, _sites, _calls = py
    begin = functions["NPUGraph.capture_begin"]
    assert (begin.start, begin.end, begin.kind) == (17, 20, "method")
    assert begin.signature == "def capture_begin(self, pool=None, capture_error_mode='global')"
    assert functions["NPUGraph"].kind == "class"
    assert (functions["make_graphed_callables"].start, functions["make_graphed_callables"].end) == (45, 51)
    assert functions["make_graphed_callables._check"].kind == "function"


def test_python_messages_from_fstrings_concatenation_tuples_variables_and_formats(py):
    _functions, sites, _calls = py
    by_line = {s.line: s for s in sites}
    assert by_line[19].message == ("Unknown capture_error_mode <capture_error_mode>; use global, thread_local or relaxed")
    update = by_line[24]
    assert update.message == "The current graph configuration does not support update. Capture with auto_dispatch_capture=True first."
    assert (update.message_line, update.error_code, update.function) == (25, 'pta_error(\'PARAM\')', "NPUGraph.update")
    assert by_line[31].message == "Expected a list of dicts, got <type(cpu_update_input).__name__>"  # via `msg = ...`
    assert by_line[32].kind == "warn" and by_line[32].message == "NPUGraph.update is experimental: <%s> inputs"
    assert by_line[15].kind == "log" and by_line[15].message.startswith("NPUGRAPH Lifecycle NPUGraph created, graph_id=<%s>")
    assert by_line[48].message == "In the beginning, all sample_args must be Tensors; got <{}>"


def test_python_file_this_python_cannot_parse_is_scanned_by_tokens():
    text = 'class A:\n    def f(self):\n        raise RuntimeError("old style")\n\nprint "python 2"\n\ndef g():\n    pass\n'
    functions, sites, error, _calls = scan_python(text)
    assert "SyntaxError" in error
    assert [(f.qualname, f.start, f.end) for f in functions] == [("A", 1, 3), ("A.f", 2, 3), ("g", 7, 8)]
    assert [(s.line, s.message) for s in sites] == [(3, "old style")]


def test_piece_helpers():
    assert printf_pieces("a %s b %5.2f c %% d") == ["a ", ["%s"], " b ", ["%5.2f"], " c % d"]
    assert render_pieces(example_pieces("aclop is <opName>. ok")) == "aclop is <opName>. ok"
    assert example_pieces("numeric_limits<uint64_t>::max()") == ["numeric_limits<uint64_t>::max()"]
    assert normalize("A ,  B\\nC") == normalize("a,b c")


def test_cpp_macro_body_with_stringified_parameters():
    # the shape of op-plugin's EXEC_GET_MAX_WORKSPACE_CMD: `#api` may even start a continued line
    text = ('#define EXEC(api, ...)                          \\\n'
            '  do {                                          \\\n'
            '    NPU_CHECK_ERROR(status, "call " #api " failed"); \\\n'
            '    TORCH_CHECK(addr != nullptr,                \\\n'
            '        #api "GetMaxWorkspaceSize",             \\\n'
            '        " not in ", LibName());                 \\\n'
            '  } while (0)\n'
            '\n'
            'void after() {}\n')
    functions, sites, _calls = scan_cpp(text)
    assert [(f.qualname, f.start, f.end, f.kind) for f in functions] == [("EXEC", 1, 7, "macro"), ("after", 9, 9, "function")]
    assert [(s.line, s.message_line, s.kind, s.function, s.message) for s in sites] == [
        (3, 3, "npu_check", "EXEC", "<__func__:__FILE__:__LINE__> NPU function error: call <#api> failed, error code is <error_code>"),
        (4, 5, "check", "EXEC", "<#api>GetMaxWorkspaceSize not in <LibName()>"),
    ]
