"""The model side of cselab: what trains and evaluates an encoder.

``config`` (TrainConfig, presets in ``configs/``), ``data`` (loaders), ``encoder`` (backbone,
poolers, SentenceEncoder, model folders), ``losses`` (the InfoNCE core and the component
interface), ``methods`` (the registry and each method in its own file), ``train`` (the loop),
``evaluate`` (the suites and the evaluation cache), ``rundir`` (the run directory), ``export`` (a
run as a model folder) and their foundations (``io``, ``utils``, ``options``, ``distributed``,
``progress``, ``timing``, ``lockfile``, ``project``). Nothing here imports the workbench side
(:mod:`cselab.workbench`); import-linter's contract in pyproject.toml says so and
tests/test_layers.py checks it. docs/architecture.md maps every module.
"""
