"""Paper figures as functions: each returns a :class:`matplotlib.figure.Figure`; :func:`save_figure`
writes PNG and PDF with reproducible bytes. Which function draws which paper figure: docs/figures.md.
"""
from .check import check_figure
from .comparisons import (plot_ablation_bars, plot_cap_geometry, plot_lambda_bound, plot_score_points, plot_sweep,
                          plot_top4_curve, plot_umap_panels)
from .core import TooFewPoints, add_note, add_warning, new_figure, save_figure
from .alignment_uniformity import plot_alignment_trajectories, plot_alignment_uniformity
from .layer_profile import plot_layer_profile
from .statistic_families import plot_statistic_families, statistic_family_note
from .training_curves import plot_grad_norm, plot_largest_angle, plot_similarity_dynamics, plot_training_curves
from .paired import plot_paired_differences
from .palettes import categorical_colours, statistic_colour, step_colours
from .panels import key_words, legend_outside, plot_metric_grid, plot_profile_grid
from .seeds import baseline_differences, plot_baseline_differences, plot_seed_means, t_errorbar
from .style import method_color

__all__ = [
    "TooFewPoints", "add_note", "add_warning", "baseline_differences", "categorical_colours", "check_figure", "key_words",
    "legend_outside", "method_color", "new_figure", "plot_ablation_bars", "plot_alignment_trajectories",
    "plot_alignment_uniformity", "plot_baseline_differences", "plot_cap_geometry", "plot_grad_norm",
    "plot_lambda_bound", "plot_largest_angle", "plot_layer_profile", "plot_metric_grid",
    "plot_paired_differences", "plot_profile_grid", "plot_score_points", "plot_seed_means",
    "plot_similarity_dynamics", "plot_statistic_families", "plot_sweep", "plot_top4_curve", "plot_training_curves", "plot_umap_panels",
    "save_figure", "statistic_colour", "statistic_family_note", "step_colours", "t_errorbar",
]
