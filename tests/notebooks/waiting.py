# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# A notebook that waits until it is interrupted (study tests: Ctrl-C reaches the kernel). It writes
# `marker` once its waiting cell has started.

# %% tags=["parameters"]
runs = {}
marker = "started.txt"

# %%
import pathlib
import time

pathlib.Path(marker).write_text("waiting\n")
while True:
    time.sleep(0.05)
