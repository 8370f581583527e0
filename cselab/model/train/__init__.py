"""Training: the loop, the run directory and checkpoints without pickle."""
from ..methods import build_loss
from ..rundir import RunDir, RunExistsError, RunLockedError
from .guards import NonFiniteLossError
from .loop import train
from .training import TrainState

__all__ = ["NonFiniteLossError", "RunDir", "RunExistsError", "RunLockedError", "TrainState", "build_loss", "train"]
