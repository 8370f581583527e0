"""Studies: a YAML file of runs (methods × hyper-parameters × seeds, per profile) and the notebooks
to execute on them, run by one command (``cselab reproduce``). See docs/studies.md.

Modules: spec.py (the study file → validated runs and notebooks; its parts: study_file.py, the YAML
and its checks, run_grid.py, groups → runs, notebook_specs.py, notebook entries), status.py (what a
run directory holds), cost.py (the dry-run estimate), execute.py (papermill; one run through the
train notebook), launchers.py (local threads, submitit for SLURM), report.py (plan, progress, index
page), runner.py (:func:`reproduce`).
"""
from .runner import reproduce
from .spec import Study, StudyError, available_studies, load_study, study_figures_dir

__all__ = ["Study", "StudyError", "available_studies", "load_study", "reproduce", "study_figures_dir"]
