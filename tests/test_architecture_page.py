"""docs/architecture.md is true to the code where it names modules and sizes: every module its map
names exists where the map puts it, every module of the package is on the map, and every size in
its table of sizes is within a twentieth of the lines the package has."""
from __future__ import annotations

import re
from pathlib import Path

from conftest import REPO

PAGE = REPO / "docs" / "architecture.md"
DESCRIPTION_COLUMN = 20   # the map's names sit left of this column, their descriptions right of it
SIZE_TOLERANCE = 0.05


def _section(text: str, title: str) -> str:
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def module_map(text: str) -> tuple[set[str], list[str]]:
    """``(documented paths, problems)`` of the page's module map: each entry's path from the
    indentation (two spaces a level), and the ``name.py`` a folder's description lists, as files of
    that folder (or of a folder inside it)."""
    block = re.search(r"```\n(.*?)```", _section(text, "Module map"), re.S).group(1)
    documented, problems, folders, current = set(), [], {}, None
    for line in block.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        if line.strip() and indent < DESCRIPTION_COLUMN:
            name = line.split()[0]
            parent = folders.get(indent - 2, "") if indent else ""
            path = f"{parent}{name}"
            folders = {k: v for k, v in folders.items() if k < indent}
            if name.endswith("/"):
                folders[indent] = path
            current = path
            found = sorted(REPO.glob(path.rstrip("/"))) if "*" in path else [REPO / path.rstrip("/")]
            if not found or not all(p.exists() for p in found):
                problems.append(f"the map names {path}, which does not exist")
            documented.add(path.rstrip("/"))
            description = line[len(line) - len(line.lstrip(" ")) + len(name):]
        else:
            description = line
        if current and current.endswith("/"):
            for module in re.findall(r"(?<![\w./])(\w+\.py)\b", description):
                matches = [p for p in (REPO / current).rglob(module)]
                if not matches:
                    problems.append(f"the map lists {module} in {current}, which has none")
                documented.update(str(p.relative_to(REPO)) for p in matches)
    return documented, problems


def test_the_module_map_names_every_module_and_only_modules_that_exist():
    documented, problems = module_map(PAGE.read_text(encoding="utf-8"))
    assert problems == []
    modules = {str(p.relative_to(REPO)) for p in (REPO / "cselab").rglob("*.py")
               if p.name not in ("__init__.py", "__main__.py")}
    assert sorted(modules - documented) == []


def lines_of(path: Path) -> int:
    files = [path] if path.is_file() else sorted(path.rglob("*.py"))
    return sum(len(f.read_text(encoding="utf-8").splitlines()) for f in files)


def test_the_sizes_the_page_states_are_the_packages_sizes():
    table = _section(PAGE.read_text(encoding="utf-8"), "Sizes")
    rows = re.findall(r"^\| `([^`]+)` \| ([\d,]+) \|", table, re.M)
    assert len(rows) >= 5
    wrong = []
    for path, stated in rows:
        actual, stated = lines_of(REPO / path), int(stated.replace(",", ""))
        if abs(actual - stated) > SIZE_TOLERANCE * actual:
            wrong.append(f"{path}: the page says {stated} lines, it has {actual}")
    assert wrong == []
    assert "cselab" in {path.rstrip("/") for path, _ in rows}   # the whole package is among them


def test_the_map_check_finds_a_missing_and_a_stale_module(tmp_path):
    text = PAGE.read_text(encoding="utf-8")
    entry = next(line for line in text.splitlines() if line.strip().startswith("config.py "))
    stale = text.replace(entry, entry.replace("config.py", "configuration.py"))
    documented, problems = module_map(stale)
    assert problems == ["the map names cselab/model/configuration.py, which does not exist"]
    assert "cselab/model/config.py" not in documented
