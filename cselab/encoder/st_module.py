"""The path model folders exported before the move name in modules.json; the class is the current one."""
from cselab.model.encoder.st_module import CselabEncoderModule  # noqa: F401
