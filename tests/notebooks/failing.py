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
# A notebook that fails on purpose (study tests: a failing notebook is reported with its cell).

# %% tags=["parameters"]
runs = {}
message = "this notebook fails on purpose"

# %%
labels = sorted(runs)
print(labels)

# %%
raise ValueError(f"{message} ({len(labels)} runs)")
