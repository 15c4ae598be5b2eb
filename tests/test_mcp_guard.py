"""The MCP server's path guard: what a model may make the tools read. Standard library only, so
these run on every Python the project supports, with or without the MCP SDK."""
from __future__ import annotations

import os

import pytest

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.mcp.guard import (
    PathRefused, ServerSettings, check_input, check_output_dir, roots_from_uris, unique_real_paths,
)


@pytest.fixture
def tree(tmp_path):
    """inside/ is the allowed root; outside/ is not."""
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    (inside / "logs").mkdir(parents=True)
    outside.mkdir()
    (inside / "logs" / "rank0.log").write_text("[ERROR] RUNTIME(1,python):2025-01-01-00:00:00.000.000 boom\n")
    (outside / "secret.txt").write_text("token=abc\n")
    return inside, outside, unique_real_paths([str(inside)])


def test_a_file_under_the_root_is_handed_on_with_its_size(tree):
    inside, _, roots = tree
    path, size = check_input(str(inside / "logs" / "rank0.log"), roots, max_bytes=1024)
    assert path == str(inside / "logs" / "rank0.log") and size > 0


def test_a_file_outside_the_roots_is_refused_and_the_message_names_the_roots(tree):
    _, outside, roots = tree
    with pytest.raises(PathRefused) as info:
        check_input(str(outside / "secret.txt"), roots, max_bytes=None)
    message = str(info.value)
    assert "outside the allowed roots" in message and roots[0] in message and "--allow" in message


def test_dot_dot_cannot_climb_out(tree):
    inside, _, roots = tree
    with pytest.raises(PathRefused, match="outside the allowed roots"):
        check_input(str(inside / ".." / "outside" / "secret.txt"), roots, max_bytes=None)


def test_a_symlink_inside_the_root_that_points_out_is_refused(tree):
    inside, outside, roots = tree
    link = inside / "innocent.log"
    link.symlink_to(outside / "secret.txt")
    with pytest.raises(PathRefused, match="resolves to"):
        check_input(str(link), roots, max_bytes=None)


def test_a_folder_holding_a_symlink_that_leads_out_is_refused(tree):
    inside, outside, roots = tree
    (inside / "logs" / "more.log").symlink_to(outside / "secret.txt")
    with pytest.raises(PathRefused) as info:
        check_input(str(inside / "logs"), roots, max_bytes=None)
    assert "more.log" in str(info.value)


def test_a_symlinked_folder_that_leads_out_is_refused_even_nested(tree):
    inside, outside, roots = tree
    (inside / "logs" / "deeper").mkdir()
    (inside / "logs" / "deeper" / "elsewhere").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathRefused, match="elsewhere"):
        check_input(str(inside / "logs"), roots, max_bytes=None)


def test_a_symlink_loop_inside_the_root_is_walked_once(tree):
    inside, _, roots = tree
    (inside / "logs" / "loop").symlink_to(inside / "logs", target_is_directory=True)
    path, size = check_input(str(inside / "logs"), roots, max_bytes=None)
    assert path.endswith("logs") and size > 0


def test_the_size_limit_counts_every_file_of_a_folder(tree):
    inside, _, roots = tree
    (inside / "logs" / "big.log").write_bytes(b"x" * 5000)
    with pytest.raises(PathRefused) as info:
        check_input(str(inside / "logs"), roots, max_bytes=4096, limit_hint=", or raise --max-log-mb")
    assert "over the" in str(info.value) and "--max-log-mb" in str(info.value)


def test_stdin_missing_paths_and_wrong_kinds_are_refused_with_one_line(tree):
    inside, _, roots = tree
    cases = [("-", "stdin"), ("", "empty path"), (str(inside / "nope.log"), "no such file"),
             (str(inside / "logs"), "is a directory")]
    for path, expected in cases:
        with pytest.raises(PathRefused, match=expected):
            check_input(path, roots, max_bytes=None, kind="file")
    with pytest.raises(PathRefused, match="is a file"):
        check_input(str(inside / "logs" / "rank0.log"), roots, max_bytes=None, kind="dir")


def test_an_output_folder_may_not_exist_yet_but_must_be_under_a_root(tree):
    inside, outside, roots = tree
    assert check_output_dir(str(inside / "kb" / "new"), roots) == str(inside / "kb" / "new")
    with pytest.raises(PathRefused, match="outside"):
        check_output_dir(str(outside / "kb"), roots)
    (inside / "kb-link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathRefused, match="resolves to"):
        check_output_dir(str(inside / "kb-link" / "kb"), roots)


def test_a_root_prefix_is_not_a_root(tmp_path):
    """/data/logs must not let /data/logs-secret through."""
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs-secret").mkdir()
    (tmp_path / "logs-secret" / "a.log").write_text("x\n")
    roots = unique_real_paths([str(tmp_path / "logs")])
    with pytest.raises(PathRefused, match="outside"):
        check_input(str(tmp_path / "logs-secret" / "a.log"), roots, max_bytes=None)


def test_settings_take_the_working_directory_claude_project_dir_and_allow(tmp_path):
    work, project, extra = tmp_path / "work", tmp_path / "project", tmp_path / "extra"
    for folder in (work, project, extra):
        folder.mkdir()
    settings = ServerSettings.create(allow=[str(extra)], cwd=str(work), environ={"CLAUDE_PROJECT_DIR": str(project)})
    assert settings.roots == unique_real_paths([str(work), str(project), str(extra)])
    with pytest.raises(UserError, match="no such directory"):
        ServerSettings.create(allow=[str(tmp_path / "missing")], cwd=str(work), environ={})


def test_client_roots_are_file_uris_only(tmp_path):
    folder = tmp_path / "with space"
    folder.mkdir()
    uri = "file://" + str(folder).replace(" ", "%20")
    assert roots_from_uris([uri, "https://example.com/x"]) == [os.path.realpath(str(folder))]
