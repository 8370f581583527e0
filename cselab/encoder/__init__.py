"""The one former path kept: ``cselab.encoder.st_module``, which model folders exported before the
encoder moved to :mod:`cselab.model.encoder` name in their ``modules.json``."""
