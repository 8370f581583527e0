"""Training: the loop, the run directory and checkpoints without pickle."""
from .loop import NonFiniteLossError, TrainState, build_loss, train
from ..rundir import RunDir, RunExistsError, RunLockedError

__all__ = ["NonFiniteLossError", "RunDir", "RunExistsError", "RunLockedError", "TrainState", "build_loss", "train"]
