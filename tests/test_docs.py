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
# The pages that report what the workbench found (the claims tables, the comparison, the paper-vs-code
# differences): a reader reaches each from the navigation's first level, its Findings section.
FINDINGS = ("cpu-compare.md", "cpu-papers.md", "findings-methods.md", "differences.md")
# A Sphinx role written in a docstring, as it would reach a page unconverted (``:func:`x```).
RAW_ROLE = re.compile(r":(?:py:)?(?:mod|func|class|meth|attr|data|obj|exc|const):(?:<code>|`)")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site as `make docs` builds it (once for this file's tests)."""
    site = tmp_path_factory.mktemp("docs") / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    return site


def test_site_builds_strict(site):
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "Two commands" in home and 'href="glossary.html"' in home      # README.md is the home page
    assert (site / "figures/cpu-demo/dynamics/similarity_all_runs.png").is_file()   # its figure travels
    for notebook in (ROOT / "notebooks").glob("*.py"):                   # every notebook is a page
        assert (site / "notebooks" / f"{notebook.stem}.html").is_file(), notebook.name
    api = (site / "api.html").read_text(encoding="utf-8")
    assert "load_config" in api and "evaluate_sts" in api                # rendered from the docstrings


def _nav_pages(entries) -> list[str]:
    pages = []
    for entry in entries:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_the_navigation_has_every_page_and_the_findings_at_its_first_level(site):
    """docs/cpu-papers.md (the claims tables) was in no navigation entry; now every page of docs/ is,
    in three first-level sections of three kinds, the findings in theirs."""
    import yaml

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    first = {next(iter(entry)): next(iter(entry.values())) for entry in nav}
    assert list(first) == ["Home", "How-to", "Findings", "Reference"]
    assert sorted(_nav_pages(first["Findings"])) == sorted(FINDINGS)
    pages = set(_nav_pages(nav))
    docs = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert docs - pages == set()
    # as built: the sidebar of the home page lists the Findings section and links to each of its pages
    home = (site / "index.html").read_text(encoding="utf-8")
    start = re.search(r">\s*Findings\s*<", home).end()
    section = home[start:re.compile(r">\s*Reference\s*<").search(home, start).start()]
    assert all(f'href="{page.replace(".md", ".html")}"' in section for page in FINDINGS)


def _pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if "assets" not in p.parts)


def test_no_page_shows_a_raw_sphinx_role(site):
    """The API page showed 23 roles as written in the docstrings (`:mod:`, `:func:`, `:class:`); they
    are code now, linked where the page documents their object."""
    raw = {p.relative_to(site).as_posix(): RAW_ROLE.findall(p.read_text(encoding="utf-8")) for p in _pages(site)}
    assert {page: found for page, found in raw.items() if found} == {}
    api = (site / "api.html").read_text(encoding="utf-8")
    assert '<a href="#cselab.model.methods.register_method"><code>cselab.model.methods.register_method</code></a>' in api
    assert '<a href="#cselab.model.config.TrainConfig"><code>TrainConfig</code></a>' in api   # :class:`~cselab.model.config.TrainConfig`
    assert RAW_ROLE.search(":func:<code>cselab.results.match_variants</code>")             # what the test looks for


def test_every_table_of_contents_link_lands_on_its_heading(site):
    """On notebook pages a heading with code (`## Maps, one figure per starting model (at most
    `panels_per_figure` maps each)`) had a table-of-contents link to an anchor it did not have."""
    broken = {}
    for page in _pages(site):
        html = page.read_text(encoding="utf-8")
        ids = set(re.findall(r'\bid="([^"]+)"', html))
        links = set(re.findall(r'<a href="#([^"]+)" class="md-nav__link">', html))
        if links - ids:
            broken[page.relative_to(site).as_posix()] = sorted(links - ids)
    assert broken == {}
    maps = (site / "notebooks" / "embedding_maps.html").read_text(encoding="utf-8")
    assert 'href="#maps-one-figure-per-starting-model-at-most-panels_per_figure-maps-each"' in maps


def test_a_broken_link_is_a_warning_strict_fails_on():
    hooks = _hooks()
    assert hooks.resolve("docs/usage.md", "../cselab/workbench/studies/cpu-demo.yaml")[2] is None
    assert hooks.resolve("docs/usage.md", "studies.md#launchers")[:2] == ("docs/studies.md", "launchers")
    assert "does not exist" in hooks.resolve("docs/usage.md", "../cselab/workbench/studies/no-such.yaml")[2]
    assert "outside the repository" in hooks.resolve("README.md", "../shared/data")[2]
    assert hooks.resolve("README.md", "figures/cpu-demo/")[0] == "figures/cpu-demo/README.md"
    assert hooks.resolve("README.md", "https://example.org/x")[0] is None   # not checked


def test_a_file_linked_out_of_the_repository_is_never_published(tmp_path, caplog):
    """`ln -s /etc/passwd figures/cpu-compare/record.jsonl; make docs` passed --strict with the file in the
    site: a link out of the repository (the file, or a folder on its way), whether a page links to it or
    it sits in docs/, is a warning (--strict fails on it) and is not copied. The hooks run in a copy of
    the repository's layout (their ROOT is the folder they sit in)."""
    import shutil

    from mkdocs.config import load_config
    from mkdocs.structure.files import File, Files

    repo, outside = tmp_path / "repo", tmp_path / "elsewhere"
    (repo / "docs").mkdir(parents=True)
    (repo / "figures" / "s").mkdir(parents=True)
    outside.mkdir()
    (outside / "passwd").write_text("root:x:0:0\n")
    (repo / "figures" / "s" / "record.jsonl").symlink_to(outside / "passwd")
    (repo / "figures" / "linked").symlink_to(outside, target_is_directory=True)
    (repo / "figures" / "s" / "kept.jsonl").write_text("{}\n")
    (repo / "README.md").write_text("[r](figures/s/record.jsonl) [d](figures/linked/passwd) [k](figures/s/kept.jsonl)\n")
    (repo / "docs" / "page.md").write_text("# page\n")
    (repo / "docs" / "leak.md").symlink_to(outside / "passwd")
    shutil.copy(ROOT / "mkdocs_hooks.py", repo)
    (repo / "mkdocs.yml").write_text("site_name: t\nuse_directory_urls: false\nplugins: []\nhooks: [mkdocs_hooks.py]\n")
    spec = importlib.util.spec_from_file_location("copied_hooks", repo / "mkdocs_hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    assert hooks.resolve("README.md", "figures/s/kept.jsonl") == ("figures/s/kept.jsonl", "", None)
    for target in ("figures/s/record.jsonl", "figures/linked/passwd"):
        repo_path, _, problem = hooks.resolve("README.md", target)
        assert repo_path is None
        assert problem == f"{target} is a link to {outside / 'passwd'}, outside the repository: not published"
    config = load_config(str(repo / "mkdocs.yml"), site_dir=str(tmp_path / "site"))
    docs = Files([File(name, str(repo / "docs"), str(tmp_path / "site"), False) for name in ("page.md", "leak.md")])
    with caplog.at_level("WARNING", logger="mkdocs.hooks.cselab"):
        published = config.plugins.on_files(docs, config=config)
    assert sorted(f.src_uri for f in published) == ["figures/s/kept.jsonl", "index.md", "page.md"]
    assert [r.getMessage() for r in caplog.records] == [
        f"leak.md is a link to {outside / 'passwd'}, outside the repository: not published"]


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
    assert {"4 min 16 s", "11 min 15 s", "+1.8", "79.5"} <= set(readme_numbers(text))
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
