"""Profiler CSV files as dict rows, streamed, with the quirks of the Ascend exports handled.

Quirks (see the project's formats reference, section 4): time columns hold epoch microseconds
followed by a tab (`1736412474730135.222\t`); empty cells and `N/A` mean "no value"; headers
differ between profiler levels and between torch_npu and msprof exports, so callers look a
column up through a list of aliases.
"""
from __future__ import annotations

import csv
from typing import Dict, Iterator, List, Optional, Sequence

from npu_graph_skill.core.errors import InputError
from npu_graph_skill.core.ingest import TextSource, iter_lines

MAX_LINE = 1 << 20  # a profiler CSV row longer than this is cut (shapes of huge concat ops stay below)
MISSING = {"", "N/A", "NA", "n/a", "-", "None", "null", "nan", "NaN"}


def iter_csv_rows(path: str, name: Optional[str] = None) -> Iterator[Dict[str, str]]:
    """Rows keyed by the stripped header names; values stripped of spaces and the trailing tab."""
    source = TextSource(name=name or path, path=path)
    if csv.field_size_limit() < MAX_LINE:
        csv.field_size_limit(MAX_LINE)  # the default (128 KiB) is below our line cut
    reader = csv.reader(iter_lines(source, max_line=MAX_LINE))
    header: Optional[List[str]] = None
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InputError(f"{source.name}: not a readable CSV table (line {reader.line_num}: {exc})") from None
        if header is None:
            header = [cell.strip().lstrip("\ufeff") for cell in row]
            continue
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        yield {key: (row[i].strip() if i < len(row) else "") for i, key in enumerate(header)}


def num(value: Optional[str]) -> Optional[float]:
    """A cell as a float, or None when empty / `N/A` / not a number."""
    if value is None:
        return None
    text = value.strip()
    if text in MISSING:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def pick(row: Dict[str, str], aliases: Sequence[str]) -> Optional[str]:
    """The first present column of `aliases` (header names differ between exports)."""
    for key in aliases:
        if key in row:
            return row[key]
    return None


def pick_num(row: Dict[str, str], aliases: Sequence[str]) -> Optional[float]:
    return num(pick(row, aliases))
