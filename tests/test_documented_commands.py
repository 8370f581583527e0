"""Every study command docs/*.md and README.md print runs as printed, on a fresh clone (issue 53 item 1):
the commands are read from the pages' code (fenced blocks and inline spans), then run with the defaults
the docs show, in a folder holding only what a clone has (the committed figures and records; no runs/,
no reports/, no data). Nothing is skipped silently:

* a command that reads the record or plans (``--from-record``, ``--dry-run``) runs exactly as printed;
* a command that would train (a study run, ``--replan``) runs with ``--dry-run`` appended, which lists
  its runs and their status without training: this test says so in TRAINS, and checks that a paper
  study's committed record makes every one of its cpu runs ``recorded`` (a continuation trains nothing);
* ``make reproduce STUDY=...`` is run as the Makefile's recipe says (checked here), with ``--dry-run``;
* a template (``STUDY``, ``<study>``, ``my-study.yaml``, ``[...]``) or the command's bare name cannot run:
  TEMPLATES lists each one the pages print, so a new command is either run or listed here.
"""
from __future__ import annotations

import re
import shlex
import shutil
import subprocess

import pytest
from conftest import REPO

from cselab.cli import main
from cselab.workbench.studies import study_figures_dir

# the pages, and the committed figures folders' READMEs (which say how to redraw them)
PAGES = sorted((REPO / "docs").glob("*.md")) + [REPO / "README.md"] + sorted((REPO / "figures").rglob("README.md"))
COMMAND = re.compile(r"^(?:cselab|make) reproduce\b")
# printed as forms to fill in, not as commands (and the command's name alone, in prose)
TEMPLATES = {
    "cselab reproduce",
    "cselab reproduce STUDY [--profile cpu|gpu] [--jobs N] [--dry-run]",
    "cselab reproduce STUDY --replan",
    "cselab reproduce STUDY --replan --only LABEL …",
    "cselab reproduce STUDY --from-record",
    "cselab reproduce <study> --profile cpu",
    "cselab reproduce <study> --profile gpu --dry-run",
    "cselab reproduce my-study.yaml --dry-run",
    "cselab reproduce my-study.yaml --jobs 2",
    "make reproduce STUDY=name PROFILE=cpu",
    'make reproduce STUDY=name PROFILE=cpu [REPRODUCE_ARGS="--jobs 2"]',
}
CHEAP = ("--from-record", "--dry-run")
MAKE_RECIPE = '$(BIN)/cselab reproduce "$(STUDY)" --profile "$(PROFILE)" --data-dir "$(CSELAB_DATA)" $(REPRODUCE_ARGS)'


def documented_commands() -> dict[str, list[str]]:
    """``{command: [page:line, ...]}`` of every ``cselab reproduce`` / ``make reproduce`` the pages print
    in code: a fenced block's line (its ``# comment`` dropped), an indented code line or a whole inline
    code span."""
    found: dict[str, list[str]] = {}
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        fences = [(m.start(), m.end()) for m in re.finditer(r"^```.*?^```", text, re.S | re.M)]
        for start, end in fences:
            for offset, line in enumerate(text[start:end].splitlines()):
                command = line.split("  #")[0].split(" # ")[0].strip().removeprefix("$ ")
                if COMMAND.match(command):
                    lineno = text.count("\n", 0, start) + offset + 1
                    found.setdefault(command, []).append(f"{page.relative_to(REPO)}:{lineno}")
        for m in re.finditer(r"^ {4,}((?:cselab|make) reproduce .*)$", text, re.M):   # an indented code block
            if not any(start <= m.start() < end for start, end in fences):
                found.setdefault(m.group(1).strip(), []).append(f"{page.relative_to(REPO)}:{text.count(chr(10), 0, m.start()) + 1}")
        for m in re.finditer(r"`([^`\n]+)`", text):
            if any(start <= m.start() < end for start, end in fences):
                continue
            command = m.group(1).strip()
            if COMMAND.match(command):
                found.setdefault(command, []).append(f"{page.relative_to(REPO)}:{text.count(chr(10), 0, m.start()) + 1}")
    return found


def as_cselab_arguments(command: str) -> list[str]:
    """The command line's arguments to ``cselab``; ``make reproduce`` through the Makefile's recipe."""
    words = shlex.split(command)
    if words[0] == "cselab":
        return words[1:]
    variables = dict(w.split("=", 1) for w in words[2:])
    unknown = set(variables) - {"STUDY", "PROFILE", "REPRODUCE_ARGS"}
    assert not unknown, f"{command}: the test does not know the make variables {sorted(unknown)}"
    return ["reproduce", variables["STUDY"], "--profile", variables.get("PROFILE", "cpu"),
            *shlex.split(variables.get("REPRODUCE_ARGS", ""))]


COMMANDS = documented_commands()
RUNNABLE = sorted(c for c in COMMANDS if c not in TEMPLATES)
TRAINS = sorted(c for c in RUNNABLE if not any(flag in shlex.split(c) for flag in CHEAP))


def test_the_pages_print_the_commands_this_test_runs():
    # the reader found the documented ones (so an empty list cannot pass the tests below)
    assert {"cselab reproduce paper-mixcse --profile cpu --from-record", "cselab reproduce cpu-compare --from-record",
            "cselab reproduce paper-clusterns --profile gpu --dry-run", "cselab reproduce paper-apincse --profile cpu",
            "make reproduce STUDY=cpu-compare"} <= set(RUNNABLE)
    # every template listed here is still printed somewhere (the list does not outlive the pages)
    assert sorted(TEMPLATES - set(COMMANDS)) == []
    # the study commands that train, run below with --dry-run appended
    assert "cselab reproduce paper-apincse --profile cpu" in TRAINS
    assert "cselab reproduce paper-mixcse --profile cpu --from-record" not in TRAINS


def test_the_makefile_reproduce_recipe_is_the_one_the_test_translates():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\nreproduce:", 1)[1].split("\n\n", 1)[0]
    assert MAKE_RECIPE in recipe


@pytest.fixture(scope="module")
def fresh_clone(tmp_path_factory):
    """What a clone holds of figures/ (the committed records and figures), and nothing else around it."""
    root = tmp_path_factory.mktemp("clone")
    tracked = subprocess.run(["git", "ls-files", "figures"], cwd=REPO, capture_output=True, text=True, check=True)
    for name in tracked.stdout.splitlines():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, root / name)
    assert (root / "figures" / "cpu-papers" / "paper-mixcse" / "record.jsonl").is_file()
    return root


@pytest.mark.parametrize("command", RUNNABLE)
def test_a_documented_command_runs_as_printed_on_a_fresh_clone(command, fresh_clone, monkeypatch, capsys):
    monkeypatch.chdir(fresh_clone)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    arguments = as_cselab_arguments(command)
    if command in TRAINS:
        arguments.append("--dry-run")   # it would train: its plan, without training
    assert main(arguments) == 0, f"{command} ({', '.join(COMMANDS[command])})"
    out = capsys.readouterr().out
    study, profile = arguments[1], arguments[arguments.index("--profile") + 1] if "--profile" in arguments else "cpu"
    if "--dry-run" in arguments:
        statuses = re.findall(r"^\| \S+ +\| .*\| (new|partial|finished|recorded) +\|", out, re.M)
        assert statuses, out[-2000:]
        if study.startswith("paper-") and profile == "cpu":
            # the committed record is found where the study file says: nothing of it is trained again (a
            # study file may plan more seeds than its record holds yet: those, and only those, are new)
            lines = (fresh_clone / study_figures_dir(study) / study / "record.jsonl").read_text().splitlines()
            assert statuses.count("recorded") == len(lines), f"{command}: {sorted(set(statuses))}"
            assert set(statuses) <= {"recorded", "new"}, f"{command}: {sorted(set(statuses))}"
    else:
        assert f"{study}: " in out and "runs in the record" in out, out[-2000:]
        # rebuilt beside its record, where the study file says (figures/cpu-papers/ for a paper study)
        assert (fresh_clone / study_figures_dir(study) / study / "record" / "claims.png").is_file()


@pytest.mark.parametrize("value, shown", [("/tmp/figures", "'/tmp/figures'"), ("../elsewhere", "'../elsewhere'"),
                                          ("[figures]", "['figures']")])
def test_a_study_file_s_figures_dir_must_be_a_folder_inside_the_project(value, shown, tmp_path):
    from cselab.workbench.studies import StudyError

    study = tmp_path / "mine.yaml"
    study.write_text(f"name: mine\ndescription: x\nfigures_dir: {value}\nprofiles: {{cpu: {{}}}}\n"
                     "runs:\n  - label: simcse\n")
    with pytest.raises(StudyError) as error:
        study_figures_dir(study)
    assert str(error.value) == (f"{study}:3: figures_dir: expected a relative folder inside the project, "
                                f"e.g. figures/cpu-papers, got {shown}")
    study.write_text("name: mine\nprofiles: {cpu: {}}\nruns:\n  - label: simcse\n")
    assert study_figures_dir(study) == "figures"
