"""Only what pyproject.toml cannot say: the wheel carries the notebooks.

``notebooks/`` stays the top-level source (where users open and edit them); building copies its
jupytext ``.py`` files into the package as ``cselab/notebooks/`` (data, never imported), which
``cselab.workbench.studies.notebook_specs`` finds when cselab is installed rather than run from a clone. MANIFEST.in
puts them in the source distribution too, so a wheel built from it has them.
"""
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

NOTEBOOKS = Path(__file__).parent / "notebooks"


class BuildWithNotebooks(build_py):
    def run(self):
        super().run()
        if self.editable_mode:   # an editable install reads notebooks/ of the source tree
            return
        target = Path(self.build_lib) / "cselab" / "notebooks"
        self.mkpath(str(target))
        for notebook in sorted(NOTEBOOKS.glob("*.py")):
            self.copy_file(str(notebook), str(target / notebook.name))


setup(cmdclass={"build_py": BuildWithNotebooks})
