"""Where training records go: always ``metrics.jsonl``; with ``report_to: [tensorboard]`` also a
TensorBoard event file in the run directory (``tensorboard --logdir runs`` shows every run).

TensorBoard gets the same scalars as ``metrics.jsonl``: every numeric field of a record (booleans
and lists excluded) under ``<kind>/<field>`` — ``train/loss``, ``train/loss/info_nce``,
``train/sim/pos_cos``, ``eval/stsb_dev``, ``probe/alignment`` — at the record's ``step``. A resumed
run asks TensorBoard to drop what the killed run logged after its checkpoint (``purge_step``), as
``metrics.jsonl`` is truncated there.
"""
from __future__ import annotations

import logging
import numbers
from pathlib import Path
from typing import Sequence

from ..config import REPORTERS
from ..io import append_jsonl

logger = logging.getLogger(__name__)

__all__ = ["REPORTERS", "RunReporter", "scalars"]


def scalars(record: dict) -> dict[str, float]:
    """The TensorBoard tags and values of one metrics record."""
    kind = record.get("kind", "record")
    return {f"{kind}/{key}": float(value) for key, value in record.items()
            if key not in ("kind", "step") and isinstance(value, numbers.Real) and not isinstance(value, bool)}


class RunReporter:
    """Writes each record to ``metrics.jsonl`` and to the experiment loggers in ``report_to``."""

    def __init__(self, run_path: Path, metrics_file: Path, report_to: Sequence[str] = (), resume_step: int = 0):
        self.metrics_file = Path(metrics_file)
        self.writer = None
        if "tensorboard" in report_to:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError as e:   # torch's module needs the tensorboard package
                raise ImportError("report_to: tensorboard needs the tensorboard package "
                                  "(pip install tensorboard)") from e
            # purge_step: a resumed run hides what the killed run logged after its checkpoint.
            self.writer = SummaryWriter(log_dir=str(run_path), purge_step=resume_step + 1 if resume_step else None)
            logger.info("TensorBoard: event file in %s (tensorboard --logdir %s)", run_path, Path(run_path).parent)

    def log(self, record: dict) -> None:
        append_jsonl(self.metrics_file, record)
        if self.writer is not None:
            step = int(record["step"])
            for tag, value in scalars(record).items():
                self.writer.add_scalar(tag, value, step)
            self.writer.flush()   # a killed run keeps everything logged so far

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
