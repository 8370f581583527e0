"""JupyterLab's contents manager for the project (``.jupyter/jupyter_server_config.json`` names it;
``make lab`` uses those settings).

The notebooks are jupytext ``.py`` files whose headers carry no ``language_info``: the kernel's
Python version would make every header differ between machines. Opening such a notebook, JupyterLab
puts a blank ``language_info`` ({"name": ""}) in its model after loading it, and the kernel then
fills in its own: the model has changed before anyone edited it, so the tab shows the unsaved dot
at once and autosave rewrites the file (same text, new mtime).

:class:`NotebookContentsManager` is jupytext's contents manager, which also hands JupyterLab the
default kernel's ``language_info`` with every text notebook it reads that lacks one. The kernel's
own is then the same value and changes nothing. Saving is unchanged: jupytext writes only the keys
of the header (``language_info`` is not one), so the ``.py`` files never get it.
"""
from __future__ import annotations

from jupytext.async_contentsmanager import AsyncTextFileContentsManager


def kernel_language_info() -> dict:
    """What the python3 kernel reports as ``language_info``: ipykernel's, in this Python (the
    default kernel runs the server's Python)."""
    from ipykernel.ipkernel import IPythonKernel

    return {**IPythonKernel.language_info, "codemirror_mode": dict(IPythonKernel.language_info["codemirror_mode"])}


class NotebookContentsManager(AsyncTextFileContentsManager):
    """jupytext's contents manager; a text notebook of a Python kernel is read with the kernel's
    ``language_info`` (see the module's docstring)."""

    async def get(self, path, content=True, type=None, format=None, **kwargs):
        model = await super().get(path, content=content, type=type, format=format, **kwargs)
        notebook = model.get("content") if model.get("type") == "notebook" else None
        if notebook and not path.endswith(".ipynb"):   # an .ipynb keeps what it was saved with
            metadata = notebook["metadata"]
            if "language_info" not in metadata and metadata.get("kernelspec", {}).get("language") == "python":
                metadata["language_info"] = kernel_language_info()
        return model
