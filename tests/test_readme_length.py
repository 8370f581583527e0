"""README.md fits the first screen's budget: at most 1,200 words (counted as `wc -w` counts them:
whitespace-separated tokens of the whole file, tables and the generated blocks included). Long
explanations belong in docs/ pages the README links to."""
from __future__ import annotations

from conftest import REPO

README_WORD_LIMIT = 1200


def words(text: str) -> int:
    return len(text.split())


def test_the_readme_is_at_most_1200_words():
    count = words((REPO / "README.md").read_text(encoding="utf-8"))
    assert count <= README_WORD_LIMIT, f"README.md has {count} words; the limit is {README_WORD_LIMIT}"


def test_words_are_counted_as_wc_counts_them():
    assert words("| `a` | b-c |\n\n<!-- x -->  d\te\n") == 10
    assert words("one " * 1201) == 1201 > README_WORD_LIMIT
