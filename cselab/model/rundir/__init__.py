"""The run directory: how a training run is laid out on disk (``layout``), its checkpoint state
without pickle (``state``) and the readers that turn run directories into DataFrames for plots and
tables (``readers``). Training writes it; analyses, figures and studies read it.

::

    runs/<method>-<config hash>/
        config.json      resolved config, its hash, package versions, git commit
        metrics.jsonl    train / eval / probe records
        best/            best STS-B dev model (a Hugging Face folder + cselab.json)
        last/            full checkpoint (model + trainer_state.safetensors/.json)
        results.json     final summary (and the STS table when final_eval is on)
"""
from .layout import BEST, LAST, MODELS, RunDir, RunExistsError, RunLockedError, git_commit, label_matches, package_versions
from .readers import Runs, labelled_runs, read_config, read_metrics, read_results, run_select_by
from .state import load_state, save_state

__all__ = ["BEST", "LAST", "MODELS", "RunDir", "RunExistsError", "RunLockedError", "Runs", "git_commit", "label_matches", "labelled_runs", "load_state", "package_versions",
           "read_config", "read_metrics", "read_results", "run_select_by", "save_state"]
