"""MkDocs hooks for cselab's documentation site (mkdocs.yml: ``hooks``).

The site is built from the files the repository already has, so that it cannot drift from them:

* the home page is README.md itself (generated as ``index.md``), its links rewritten to the site;
* every relative link of a page (README.md, ``docs/**/*.md``) is resolved in the repository: a link
  to a file that does not exist is a warning, which ``mkdocs build --strict`` turns into a failure;
  a link to a file outside ``docs/`` (a study file, a module, a figure) copies that file into the site
  under its repository path and points there, a link to a folder points to the folder's README.md;
  a file that is a symbolic link out of the repository (``record.jsonl`` → ``/etc/passwd``), linked
  from a page or inside ``docs/``, is never copied: a warning, which ``--strict`` fails on;
* the notebooks ``notebooks/*.py`` (jupytext percent) are pages, rendered by mkdocs-jupyter without
  executing them, and so are the executed notebooks of the cpu-demo study
  (``reports/cpu-demo/*.ipynb``) when ``make demo`` has written them; both are added to the nav (the
  sources to its How-to section, the executed copies to Findings);
* Sphinx roles in docstrings (``:func:`cselab.results.match_variants```), which mkdocstrings leaves
  as they are written, become code, linked to the object where the page documents it;
* a notebook page's table of contents links to its headings' own anchors (mkdocs-jupyter's table of
  contents drops the code of a heading, ``## Maps (at most `panels_per_figure`)``, from the anchor
  it links to, while the heading keeps it).
"""
from __future__ import annotations

import logging
import posixpath
import re
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

log = logging.getLogger("mkdocs.hooks.cselab")

ROOT = Path(__file__).resolve().parent
NOTEBOOKS = "notebooks"
EXECUTED = "reports/cpu-demo"
# [text](target) and ![alt](target), target without spaces; optional "title" ignored
LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s]+)((?:\s+\"[^\"]*\")?\))")
FENCE = re.compile(r"^(```|~~~)", re.M)


def _notebooks() -> list[str]:
    return sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / NOTEBOOKS).glob("*.py"))


def _executed() -> list[str]:
    return sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / EXECUTED).glob("*.ipynb"))


def site_path(repo_path: str) -> str:
    """Where a repository file sits in the site's source tree."""
    if repo_path == "README.md":
        return "index.md"
    if repo_path.startswith("docs/"):
        return repo_path[len("docs/"):]
    return repo_path


def _outside_code(text: str):
    """(start, end) spans of ``text`` outside fenced code blocks."""
    spans, pos, inside = [], 0, False
    for m in FENCE.finditer(text):
        if not inside:
            spans.append((pos, m.start()))
        pos, inside = m.start(), not inside
        if not inside:
            pos = m.end()
    if not inside:
        spans.append((pos, len(text)))
    return spans


def resolve(page_repo_path: str, target: str):
    """(repo path or None, anchor, problem or None) of a link target written in ``page_repo_path``."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith(("#", "/")):
        return None, "", None
    path, _, anchor = target.partition("#")
    repo = posixpath.normpath(posixpath.join(posixpath.dirname(page_repo_path), path))
    if repo.startswith("../") or repo == "..":
        return None, anchor, f"points outside the repository: {target}"
    full = ROOT / repo
    outside = _outside_link(full)
    if outside:
        return None, anchor, f"{target} {outside}"
    if full.is_dir():
        if not (full / "README.md").is_file():
            return None, anchor, f"points to a folder without README.md: {target}"
        repo = posixpath.join(repo, "README.md")
    elif not full.is_file():
        return None, anchor, f"points to a file that does not exist: {target}"
    return repo, anchor, None


def _outside_link(path: Path) -> str | None:
    """Why ``path`` (in the repository) must not be published: a symbolic link, or a folder on its way
    that is one, leading out of the repository (``record.jsonl`` → ``/etc/passwd`` would be copied
    into the site); None when it stays inside."""
    try:
        path.resolve().relative_to(ROOT)
        return None
    except ValueError:
        return f"is a link to {path.resolve()}, outside the repository: not published"


def _links(text: str):
    for start, end in _outside_code(text):
        for m in LINK.finditer(text, start, end):
            yield m


def _page_sources(config) -> dict[str, str]:
    """repo path -> text of every Markdown page: README.md and docs/**/*.md."""
    pages = {"README.md": (ROOT / "README.md").read_text(encoding="utf-8")}
    docs = Path(config["docs_dir"])
    for p in sorted(docs.rglob("*.md")):
        pages["docs/" + p.relative_to(docs).as_posix()] = p.read_text(encoding="utf-8")
    return pages


def _section(nav: list, title: str) -> list:
    """The entries of the nav's first-level section ``title`` (a new one at the end when absent)."""
    for entry in nav:
        if isinstance(entry, dict) and title in entry and isinstance(entry[title], list):
            return entry[title]
    nav.append({title: []})
    return nav[-1][title]


def on_config(config):
    nav = config.get("nav") or []
    _section(nav, "How-to").append({"Notebooks (source)": [{Path(n).stem: site_path(n)} for n in _notebooks()]})
    executed = _executed()
    if executed:
        _section(nav, "Findings").append(
            {"Executed cpu-demo notebooks": [{Path(n).stem: site_path(n)} for n in executed]})
    config["nav"] = nav
    return config


# A Sphinx role as mkdocstrings renders a docstring's text: the role's name, then its target as code.
ROLE = re.compile(r":(?:py:)?(mod|func|class|meth|attr|data|obj|exc|const):<code>(~?)\.?([\w.]+)</code>")
HEADING = re.compile(r'<h([1-6])[^>]*\bid="([^"]+)"[^>]*>(.*?)</h\1>', re.S)


def _role_target(target: str, context: str, ids: set[str]) -> str | None:
    """The anchor of ``target`` on the page: itself, or as named inside ``context`` (the object
    whose docstring names it) and the modules above, innermost first."""
    parts = context.split(".")
    for cut in range(len(parts), -1, -1):
        candidate = ".".join([*parts[:cut], target])
        if candidate in ids:
            return candidate
    return None


def sphinx_roles_as_code(html: str) -> str:
    """``:func:`x``` as rendered → ``<code>x</code>``, a link to ``#x`` where the page has that
    anchor (``~a.b.c`` is shown ``c``, as Sphinx shows it)."""
    ids = set(re.findall(r'\bid="([^"]+)"', html))
    headings = [(m.start(), m.group(2)) for m in HEADING.finditer(html)]

    def replace(m):
        short, target = m.group(2), m.group(3)
        shown = target.rsplit(".", 1)[-1] if short else target
        context = next((anchor for start, anchor in reversed(headings) if start < m.start()), "")
        anchor = _role_target(target, context, ids)
        code = f"<code>{shown}</code>"
        return f'<a href="#{anchor}">{code}</a>' if anchor else code

    return ROLE.sub(replace, html)


def _strip_tags(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


def toc_to_heading_anchors(html: str, toc) -> None:
    """Point each entry of ``toc`` whose anchor is not on the page to the heading it names: the one
    whose text without its code gives that anchor (mkdocs-jupyter's table of contents)."""
    from markdown.extensions.toc import slugify

    ids = set(re.findall(r'\bid="([^"]+)"', html))
    without_code = {}
    for m in HEADING.finditer(html):
        text = _strip_tags(re.sub(r"<code>.*?</code>", "", m.group(3), flags=re.S)).replace("¶", "")
        without_code.setdefault(slugify(text, "-"), m.group(2))
    stack = list(toc)
    while stack:
        item = stack.pop()
        stack.extend(item.children)
        if item.id not in ids and item.id in without_code:
            item.id = without_code[item.id]


@event_priority(-100)   # after mkdocs-jupyter has rendered a notebook page and set its table of contents
def on_page_content(html: str, page, config, files):
    if page.toc is not None and not page.file.src_uri.endswith(".md"):
        toc_to_heading_anchors(html, page.toc)
    return sphinx_roles_as_code(html)


@event_priority(100)   # before mkdocs-jupyter's on_files, which turns the notebooks into pages
def on_files(files: Files, config) -> Files:
    wanted = set(_notebooks()) | set(_executed())
    for repo_path, text in _page_sources(config).items():
        for m in _links(text):
            repo, _, problem = resolve(repo_path, m.group(2))
            if repo and not repo.startswith("docs/"):
                wanted.add(repo)
    wanted.discard("README.md")
    files.append(File.generated(config, "index.md", content=(ROOT / "README.md").read_text(encoding="utf-8")))
    for repo in sorted(wanted):
        if files.get_file_from_path(site_path(repo)) is None:
            files.append(File(site_path(repo), src_dir=str(ROOT), dest_dir=config["site_dir"],
                              use_directory_urls=config["use_directory_urls"]))
    # a file of docs/ (or a notebook) linked out of the repository is dropped, not copied: the warning
    # fails `mkdocs build --strict` (`make docs`), a plain build leaves it out of the site
    ours = {Path(config["docs_dir"]).resolve(), ROOT}   # not the theme's files, which live in its package
    for file in list(files):
        outside = (file.src_dir and Path(file.src_dir).resolve() in ours
                   and _outside_link(Path(file.abs_src_path)))
        if outside:
            log.warning("%s %s", file.src_uri, outside)
            files.remove(file)
    return files


def on_page_markdown(markdown: str, page, config, files):
    src = page.file.src_uri
    repo_path = "README.md" if src == "index.md" else ("docs/" + src if not _is_repo_copy(src) else src)
    if not src.endswith(".md"):
        return markdown
    out, pos = [], 0
    for m in _links(markdown):
        repo, anchor, problem = resolve(repo_path, m.group(2))
        if problem:
            log.warning("%s: link %s", repo_path, problem)
            continue
        if repo is None:
            continue
        new = posixpath.relpath(site_path(repo), posixpath.dirname(src) or ".")
        if anchor:
            new += "#" + anchor
        out.append(markdown[pos:m.start(2)] + new)
        pos = m.end(2)
    out.append(markdown[pos:])
    return "".join(out)


def _is_repo_copy(src_uri: str) -> bool:
    return (ROOT / src_uri).is_file() and not (ROOT / "docs" / src_uri).is_file() and src_uri != "index.md"
