"""cselab: unsupervised contrastive sentence embeddings, in two packages a reader sees at once.

* :mod:`cselab.model` — what trains and evaluates an encoder (config, data, encoder, losses,
  methods, train, evaluate, the run directory, export, and their foundations);
* :mod:`cselab.workbench` — a study's runs → records → statistics → tables and figures, the
  notebooks' helpers, the studies; it imports the model side, never the other way round;
* :mod:`cselab.cli` — the command line, above both.

Modules have one path each (no import hook, no aliases): the one former path kept is
``cselab.encoder.st_module``, a real module that model folders exported before the move name in
their ``modules.json``.
"""
