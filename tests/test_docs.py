"""The documentation cannot go stale: the site builds with --strict, and the README quotes only numbers
that a results file or a docs table holds and names only paths that exist.

`mkdocs build --strict` fails on a broken link (every relative link of README.md and docs/ is
resolved in the repository by mkdocs_hooks.py), a missing anchor, a page the nav names that does not
exist, or a function of docs/api.md that the code no longer has."""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def _hooks():
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "mkdocs_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ----------------------------------------------------------------------------- the site
def test_site_builds_strict(tmp_path):
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "Two commands" in home and 'href="glossary.html"' in home      # README.md is the home page
    assert (site / "figures/cpu-demo/dynamics/similarity_all_runs.png").is_file()   # its figure travels
    for notebook in (ROOT / "notebooks").glob("*.py"):                   # every notebook is a page
        assert (site / "notebooks" / f"{notebook.stem}.html").is_file(), notebook.name
    api = (site / "api.html").read_text(encoding="utf-8")
    assert "load_config" in api and "evaluate_sts" in api                # rendered from the docstrings


def test_a_broken_link_is_a_warning_strict_fails_on():
    hooks = _hooks()
    assert hooks.resolve("docs/usage.md", "../cselab/workbench/studies/cpu-demo.yaml")[2] is None
    assert hooks.resolve("docs/usage.md", "studies.md#launchers")[:2] == ("docs/studies.md", "launchers")
    assert "does not exist" in hooks.resolve("docs/usage.md", "../cselab/workbench/studies/no-such.yaml")[2]
    assert "outside the repository" in hooks.resolve("README.md", "../shared/data")[2]
    assert hooks.resolve("README.md", "figures/cpu-demo/")[0] == "figures/cpu-demo/README.md"
    assert hooks.resolve("README.md", "https://example.org/x")[0] is None   # not checked


def test_links_inside_code_blocks_are_not_links():
    text = "[a](a.md)\n```\n[b](b.md)\n```\n[c](c.md)\n"
    assert [m.group(2) for m in _hooks()._links(text)] == ["a.md", "c.md"]


# ----------------------------------------------------------------------------- the README
def _prose(text: str) -> str:
    """README text without link targets (paths, not quoted numbers) and without code blocks."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.sub(r"\]\([^)]*\)", "]", text)


def _sources() -> str:
    """Everything a README number may be quoted from: docs pages and tables, the figures' READMEs,
    study reports and run results when present, the build and package files."""
    paths = [*ROOT.glob("docs/**/*.md"), *ROOT.glob("figures/**/README.md"), *ROOT.glob("reports/**/*.md"),
             *ROOT.glob("runs/*/results.json"), ROOT / "Makefile", ROOT / "pyproject.toml"]
    return "\n".join(p.read_text(encoding="utf-8") for p in paths if p.is_file())


NUMBER = re.compile(r"\d+ min \d+ s|(?<![\w.])[+−-]?\d[\d,]*(?:\.\d+)*(?![\w])")


def readme_numbers(text: str) -> list[str]:
    return sorted(set(NUMBER.findall(_prose(text))))


def _normal(number: str) -> str:
    return number.replace("−", "-")


def missing_numbers(text: str, sources: str) -> list[str]:
    tokens = {_normal(t) for t in NUMBER.findall(sources)}
    tokens |= {t.lstrip("+-") for t in tokens}
    return [n for n in readme_numbers(text) if _normal(n) not in tokens and _normal(n).lstrip("+-") not in tokens]


def test_every_number_the_readme_quotes_is_recorded():
    text = README.read_text(encoding="utf-8")
    assert {"17 min 22 s", "4 min 37 s", "11 min 15 s", "+1.8", "79.5"} <= set(readme_numbers(text))
    assert missing_numbers(text, _sources()) == []


def test_the_number_check_can_fail():
    assert missing_numbers("the demo takes 3 min 59 s, STS 81.234", "3 min 58 s; 81.23") == ["3 min 59 s", "81.234"]


PATH_ROOTS = ("cselab/", "docs/", "tests/", "notebooks/", "figures/", "benchmarks/")


def readme_paths(text: str) -> list[str]:
    """The README's link targets and the repository paths it names in code spans."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    links = [t for t in re.findall(r"\]\(([^)\s#]+)", text) if not re.match(r"^[a-z]+:", t)]
    spans = [s for s in re.findall(r"`([^`\s]+)`", text) if s.startswith(PATH_ROOTS)]
    return sorted(set(links + spans))


def test_every_path_the_readme_names_exists():
    paths = readme_paths(README.read_text(encoding="utf-8"))
    assert "figures/cpu-demo/dynamics/similarity_all_runs.png" in paths and "docs/glossary.md" in paths
    missing = [p for p in paths if not any(ROOT.glob(p))]
    assert missing == []
