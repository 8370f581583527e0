"""docs/adding-a-method.md's example is a working method: registered, named, selectable, and its
view hook changes a real training step."""
from __future__ import annotations

import re

import pytest
import torch

from conftest import REPO
from cselab.config import load_config
from cselab.encoder import SentenceEncoder
from cselab.losses import ContrastiveBatch
from cselab.methods import METHODS, build_loss, display_names


@pytest.fixture
def example():
    text = (REPO / "docs" / "adding-a-method.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    namespace: dict = {}
    exec(compile(code, "docs/adding-a-method.md", "exec"), namespace)
    yield namespace
    del METHODS["word_deletion"]


def test_the_documented_example_trains_a_step(example, tiny_model):
    assert display_names()["word_deletion"] == "WordDel"
    cfg = load_config({"model": str(tiny_model), "method": ["word_deletion", "mixcse"],
                       "word_deletion": {"rate": 0.5}})
    torch.manual_seed(0)
    encoder = SentenceEncoder.from_pretrained(tiny_model).train()
    loss_fn = build_loss(cfg)
    loss_fn.setup(encoder)
    sentences = ["a cat sat on the mat", "dogs bark loudly at night", "the sun rises in the east"]
    inputs = loss_fn.training_inputs(encoder, sentences, 32)
    n = len(sentences)
    assert inputs["attention_mask"][n:].sum() < inputs["attention_mask"][:n].sum()   # view 2 lost subwords
    view1, view2 = encoder(inputs).split(n)
    out = loss_fn(ContrastiveBatch(view1.embeddings, view2.embeddings, inputs=inputs))
    assert 0 < out.stats["word_deletion.kept"] < 1 and torch.isfinite(out.loss)
    with pytest.raises(ValueError, match="rate"):
        load_config({"method": "word_deletion", "word_deletion": {"rate": 1.5}})


def test_readme_methods_table_lists_every_registered_method():
    """The docs' method table and the registry agree: a registered method missing from README's
    table (or a row for a method that no longer exists) fails here."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("## Methods"):readme.index("## Documentation")]
    first_cells = re.findall(r"^\| ([^|]*`[a-z_]+`[^|]*) \|", table, re.M)
    rows = {name for cell in first_cells for name in re.findall(r"`([a-z_]+)`", cell)} - {"method"}
    assert rows == set(METHODS)
