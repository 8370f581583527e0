"""Training: the loop, the run directory and checkpoints without pickle."""
from .loop import NonFiniteLossError, TrainState, build_loss, train
from ..rundir import RunDir, RunExistsError

__all__ = ["NonFiniteLossError", "RunDir", "RunExistsError", "TrainState", "build_loss", "train"]
