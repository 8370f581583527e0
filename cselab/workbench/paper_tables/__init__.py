"""Assemble a paper's tables from a study's runs: which runs are which of the paper's variants,
which backbone they start from, our numbers beside the published ones, sweeps over a config key.

The paper notebooks (notebooks/paper_*.py) call these as ``pt.<name>`` after
``from cselab.workbench import paper_tables as pt``; the numbers come from :mod:`cselab.model.evaluate.cache`
(cached evaluations), the published ones from :mod:`cselab.workbench.published`.

One module per job, each importing only those listed before it:

- :mod:`.backbones` — a run's ``model``, runs per backbone, the backbone as the papers write it;
- :mod:`.notebook` — the ``profile`` sizing of the notebooks' costly parameters, legends, file names;
- :mod:`.variants` — runs → the paper's variants by the results layer's label-prefix rule
  (:func:`cselab.workbench.results.match_variants`; configs checked), and the groups split per backbone;
- :mod:`.beside_published` — the published rows beside ours (only for the papers' own backbones);
- :mod:`.summaries` — results → tables: mean ± std over seeds (:mod:`cselab.workbench.results`), the
  untuned backbone from snapshot 0; the paired t-tests against SimCSE per backbone are
  :mod:`cselab.workbench.comparisons`' (``pt.paired_comparison``), as every comparison is;
- :mod:`.sweeps` — sweeps over a config key, last logged values, enough values for a figure;
- :mod:`.claims` — a paper's claims as paired comparisons over seeds (:mod:`cselab.workbench.results`'
  tests), Holm-corrected over the paper's claims, with verdicts.
"""
from ...model.evaluate.sts import STS_TASKS          # re-exported: cselab.workbench and the notebooks read them here
from ..published import paper_backbone
from ..results import VariantSpec, assign_variants, variant_frame   # re-exported: the notebooks read them as pt.<name>
from .backbones import (backbone_label, group_model, interlayer_index, num_layers, one_per_backbone,
                        run_model, runs_by_backbone)
from .beside_published import (backbone_note, published_beside, published_notes, published_transposed,
                               with_published_column)
from .notebook import PROFILES, by_profile, for_legend, slug
from ..comparisons import paired_comparison
from .summaries import (average_label, averages_summary, comparison_table, seeds_label,
                        sts_options, sts_selected, suite_columns, suite_summary, untuned)
from .claims import Claim, as_variants, claims_table, format_claims, study_claims_table
from .sweeps import COMPARISON_MIN_VALUES, TREND_MIN_VALUES, enough_values, last_values, sweep_results, sweep_runs
from .variants import (groups_table, identity_without_seed, one_run_warning, representatives,
                       runs_with, select_variants, split_by_backbone, unmatched, used_runs, variant_of,
                       variant_runs)

__all__ = [
    # re-exported from lower layers
    "STS_TASKS", "paper_backbone", "VariantSpec", "assign_variants", "variant_frame",
    # backbones
    "backbone_label", "group_model", "interlayer_index", "num_layers", "one_per_backbone", "run_model",
    "runs_by_backbone",
    # published numbers beside ours
    "backbone_note", "published_beside", "published_notes", "published_transposed", "with_published_column",
    # notebook odds and ends
    "PROFILES", "by_profile", "for_legend", "slug",
    # results → tables
    "average_label", "averages_summary", "comparison_table", "paired_comparison", "seeds_label", "sts_options",
    "sts_selected", "suite_columns", "suite_summary", "untuned",
    # a paper's claims checked on our runs
    "Claim", "as_variants", "claims_table", "format_claims", "study_claims_table",
    # sweeps and curves
    "COMPARISON_MIN_VALUES", "TREND_MIN_VALUES", "enough_values", "last_values", "sweep_results", "sweep_runs",
    # runs → the paper's variants
    "groups_table", "identity_without_seed", "one_run_warning", "representatives", "runs_with",
    "select_variants", "split_by_backbone", "unmatched", "used_runs", "variant_of", "variant_runs",
]
