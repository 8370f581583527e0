"""One meaning per colour across the whole figure set.

Four palettes, each for one kind of thing, so that a colour read in one figure means the same in
every other:

* **methods** — :data:`METHOD_PALETTE`, a slot per method (``Component.color_slot``; read through
  :func:`cselab.workbench.plots.style.method_color`): Okabe & Ito's colour-blind-safe colours, then Tol's wine,
  green and indigo; the untrained backbone is grey (:data:`NON_METHOD_COLORS`). Methods without a
  slot, and series that are neither a method nor a statistic (ω, loss parts), take
  :data:`OTHER_COLORS` (the rest of Tol's muted scheme). The same slot gives each method its
  marker (:data:`METHOD_MARKERS`, :func:`cselab.workbench.plots.style.method_marker`), and a variant of
  a method (another σ, k, M) a shade of its colour (:func:`shade`): the variant's family decides the hue.
* **training statistics** — :func:`statistic_colour`: one colour per *kind* of pair or quantity
  (positive, in-batch negative, hard negative, false negative, nearest centroid, mixed negative,
  noise negative, …), whatever method logged it and whatever figure draws it
  (:func:`cselab.workbench.method_views.statistic_colours`; each method declares the kind of each
  cosine it logs, ``Component.stat_kinds``, and its kinds' colours in its module of
  cselab/workbench/method_views/, so that nothing here names a method's statistics). None of them is a method colour, none is
  within CIEDE2000 ΔE 15 of a method colour, of a step grey or of another statistic
  (``tests/test_palettes.py``). The colours were chosen farthest-first in CIEDE2000 away from the
  method colours, then named by meaning: what is pulled together is dark (positive black,
  augmented positive dark brown), the negatives are the saturated reds, magentas and violets, the
  nearest centroid dark green (a dark red read as the in-batch negatives' red beside it) and the
  centroids' spread slate.
* **steps and snapshots** — :func:`step_colours` / :data:`STEP_CMAP`: a sequential grey ramp, light
  (early) to dark (late). Grey is the one family the method palette leaves free, so points
  coloured by step never read as a method (the method colours are all saturated hues; every step
  grey is at least ΔE 15 from every method and statistic colour). The untrained backbone's grey
  (BERT, :data:`NON_METHOD_COLORS`) lies on the ramp: it is the model before any step.
* **categories** (the 14 DBpedia classes, any labelled sample) — :func:`categorical_colours`:
  :data:`CATEGORICAL_COLOURS`, 14 colours picked farthest-first in CIEDE2000 (a Glasbey-style set)
  with lightness 35–80, so that each reads on white; every pair is at least ΔE 22 apart, where
  the first 14 of ``tab20`` (paired light/dark hues) come as close as 12. A map coloured by
  category draws no method colour beside it, so these may share a hue with a method.

:func:`delta_e` (CIEDE2000, Sharma, Wu & Dalal 2005) is here so that the tests, and anyone adding a
colour, measure distinctness the same way without a colour-science dependency.
"""
from __future__ import annotations

import re
import zlib

import numpy as np
from matplotlib import colormaps
from matplotlib.colors import LinearSegmentedColormap, to_hex, to_rgb

from ..method_views import statistic_colours

# ------------------------------------------------------------------ methods
# The colour slots a method may declare (``Component.color_slot``): Okabe–Ito's colour-blind-safe
# colours first (the baseline and the four papers' methods), then Tol's wine, green and indigo.
METHOD_PALETTE = ("#0072B2",   # 0 blue (SimCSE)
                  "#D55E00",   # 1 vermillion
                  "#009E73",   # 2 bluish green
                  "#CC79A7",   # 3 reddish purple
                  "#E69F00",   # 4 orange
                  "#56B4E9",   # 5 sky blue
                  "#882255",   # 6 Tol's wine
                  "#117733",   # 7 Tol's green
                  "#332288")   # 8 Tol's indigo
# The untrained encoder: grey. A family's pooler trained with SimCSE's loss (APINCSE's pooler-only
# control): olive, its own colour, because SimCSE's blue would make it read as a second SimCSE and
# its family's as the method it controls for.
NON_METHOD_COLORS = {"bert": "#555555", "pooler_only": "#999933"}
# A marker per colour slot, so that a method's points keep one shape in every figure (ClusterNS was
# ◆ in one figure, ▽ in another, ■ in a third: a marker by position in the figure's list); the
# untrained backbone and the pooler-only control have their own.
METHOD_MARKERS = ("o",   # 0 SimCSE
                  "s",   # 1
                  "^",   # 2
                  "D",   # 3
                  "v",   # 4
                  "P",   # 5
                  "X",   # 6
                  "p",   # 7
                  "h")   # 8
NON_METHOD_MARKERS = {"bert": "x", "pooler_only": "d"}
# A claim's verdict group (cselab.workbench.claims.verdict_class) as colour (Okabe–Ito), the same in the
# overview of every claim (plots/overview.py) and in each study's claims figure (plots/claims.py); "no
# test" and "not testable" are the same grey: neither says anything about the claim.
VERDICT_COLOURS = {"holds": "#009E73", "reversed": "#D55E00", "powered null": "#0072B2",
                   "underpowered": "#E69F00", "inconclusive": "#CC79A7", "not testable": "#999999",
                   "no test": "#999999"}
VERDICT_COLOUR_NAMES = {"#009E73": "green", "#D55E00": "vermilion", "#0072B2": "blue", "#E69F00": "orange",
                        "#CC79A7": "pink", "#999999": "grey"}   # the same colours in a note's words
# A variant of a method (another σ, k, batch size, an ablation that keeps the method's name) is drawn
# in a shade of its method's colour, never in another method's: the method itself in its colour, the
# others mixed with white (positive) or black (negative) by these shares, in order.
VARIANT_SHADES = (0.0, 0.45, -0.35, 0.7, -0.55)
# Methods without a slot, and series that are neither a method nor a statistic: the rest of Tol's
# muted scheme (colour-blind safe).
OTHER_COLORS = ("#44AA99", "#AA4499", "#88CCEE", "#CC6677", "#DDCC77")



def shade(colour: str, k: int) -> str:
    """The ``k``-th shade of a method's colour (:data:`VARIANT_SHADES`; ``k = 0`` the colour itself):
    mixed with white, then with black, then further; past the list, the list again."""
    share = VARIANT_SHADES[k % len(VARIANT_SHADES)]
    rgb = np.asarray(to_rgb(colour), float)
    target = np.ones(3) if share > 0 else np.zeros(3)
    return to_hex(rgb + abs(share) * (target - rgb))


# ------------------------------------------------------------------ training statistics
# One colour per kind of statistic (what the number is about), the same in every figure: each kind's
# colour is declared beside its method's other presentation (cselab.workbench.method_views,
# statistic_colours), the core's kinds with the core's.
# Statistics of no declared kind get one of these (by a hash of the key): none is a method or a
# statistic colour either.
STATISTIC_RESERVE = ("#AA8866", "#445500", "#885544", "#778866")

# Statistic keys that are no logged cosine but name a kind in other words: analysis frames' columns
# (MixCSE's paper calls the in-batch negatives "random negatives"). A column spelling a kind with
# underscores (``mixed_negative``, ``positive``) is that kind without an entry here.
STATISTIC_SYNONYMS = {"random_negative": "in-batch negative"}


def statistic_kinds() -> dict[str, str]:
    """The kind of every statistic key that declares one: the core's and each method's, as they
    declare them (``Component.stat_kinds``, :func:`cselab.model.methods.stat_kinds`: full keys such as
    ``clusterns.hard_neg_cos``), then :data:`STATISTIC_SYNONYMS`. Read from the registry on every
    call, so a method registered later is coloured too."""
    from ...model.methods import stat_kinds

    return {**stat_kinds(), **STATISTIC_SYNONYMS}


def statistic_kind(key: str) -> str | None:
    """The kind (a key of :func:`~cselab.workbench.method_views.statistic_colours`) of a statistic key, or ``None``:
    ``sim/clusterns.hard_neg_cos`` and ``hard_neg_cos`` → "hard negative", ``random_negative`` →
    "in-batch negative", a kind's own name (or with underscores, ``mixed_negative``) → itself. A
    key without its ``<method>.`` prefix is read as the core's statistic of that name, else as the
    first method's that declares it."""
    key = str(key).removeprefix("sim/")
    colours = statistic_colours()
    for spelling in (key, key.replace("_", " ")):
        if spelling in colours:
            return spelling
    kinds = statistic_kinds()
    if key in kinds:
        return kinds[key]
    bare = key.split(".", 1)[1] if "." in key else key
    if bare in kinds:
        return kinds[bare]
    return next((kind for full, kind in kinds.items() if full.split(".", 1)[-1] == bare), None)


# One marker per statistic kind, as each has one colour: the kinds in their views' registration order
# (:func:`~cselab.workbench.method_views.statistic_colours`) take these shapes in turn, so that "hard
# negative" is the same shape in the demo's figures and the records' (it was whichever shape was free).
STATISTIC_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "p", "<", ">", "8")


def statistic_marker(key: str) -> str | None:
    """The marker of a statistic key or kind (:func:`statistic_kind`), the same in every figure; None
    for a key of no known kind."""
    kind = statistic_kind(key)
    if kind is None:
        return None
    kinds = list(statistic_colours())
    return STATISTIC_MARKERS[kinds.index(kind) % len(STATISTIC_MARKERS)] if kind in kinds else None


def is_statistic(key: str) -> bool:
    return statistic_kind(key) is not None


def statistic_colour(key: str) -> str:
    """The colour of a training statistic (a ``sim/`` key, a frame column such as
    ``random_negative``, or a kind such as "hard negative"), the same in every figure; a statistic
    of no known kind gets a stable colour of :data:`STATISTIC_RESERVE`."""
    kind = statistic_kind(key)
    if kind is not None:
        return statistic_colours()[kind]
    return STATISTIC_RESERVE[zlib.crc32(str(key).encode()) % len(STATISTIC_RESERVE)]


# ------------------------------------------------------------------ steps and snapshots
STEP_RANGE = (0.3, 0.8)   # the part of matplotlib's "Greys" used: no white (invisible), no black (the positive)
# The sequential map of steps and snapshots (e.g. ``scatter(..., c=steps, cmap=STEP_CMAP)``).
STEP_CMAP = LinearSegmentedColormap.from_list(
    "cselab_steps", [to_hex(c) for c in colormaps["Greys"](np.linspace(*STEP_RANGE, 64))])


def step_colours(n: int) -> list[str]:
    """``n`` colours for steps or snapshots in order, light (first) to dark (last); one step is
    drawn dark."""
    if n < 1:
        return []
    if n == 1:
        return [to_hex(STEP_CMAP(1.0))]
    return [to_hex(STEP_CMAP(i / (n - 1))) for i in range(n)]


_STEP_LABEL = re.compile(r"^\s*(step|snapshot|checkpoint)[\s_-]*\d+", re.IGNORECASE)


def looks_like_steps(names) -> bool:
    """Whether every name is a step or snapshot ("step 0", "step 16", "checkpoint-200")."""
    names = [str(n) for n in names]
    return bool(names) and all(_STEP_LABEL.match(n) for n in names)


# ------------------------------------------------------------------ categories
# Farthest-first in CIEDE2000 from Okabe–Ito's blue over the sRGB grid of step 17 with lightness
# 35–80 (a Glasbey-style set): each prefix is as spread as the greedy choice makes it.
CATEGORICAL_COLOURS = ("#0072B2", "#446600", "#DD0000", "#EE00FF", "#CC9900", "#00DD00", "#00BBBB",
                       "#774466", "#FF9999", "#AAAAEE", "#4411FF", "#885500", "#888877", "#006666")


def categorical_colours(n: int) -> list[str]:
    """``n`` colours a reader tells apart, for unordered categories (classes of a labelled sample):
    :data:`CATEGORICAL_COLOURS` up to 14; beyond, a sample of ``turbo`` (neighbours close — more
    than 14 classes want markers or facets as well)."""
    if n <= len(CATEGORICAL_COLOURS):
        return list(CATEGORICAL_COLOURS[:n])
    return [to_hex(colormaps["turbo"](i / (n - 1))) for i in range(n)]


# ------------------------------------------------------------------ colour difference
def lab(colour) -> np.ndarray:
    """CIELAB (D65) of a matplotlib colour."""
    rgb = np.asarray(to_rgb(colour), float)
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    to_xyz = np.array([[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750],
                       [0.0193339, 0.1191920, 0.9503041]])
    xyz = to_xyz @ linear / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def ciede2000(lab1, lab2) -> float:
    """CIEDE2000 colour difference of two CIELAB colours (Sharma, Wu & Dalal 2005); about 2 is a
    just-noticeable difference, 10+ clearly different, 20+ different colours at a glance."""
    l1, a1, b1 = (float(v) for v in lab1)
    l2, a2, b2 = (float(v) for v in lab2)
    c_mean = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(c_mean ** 7 / (c_mean ** 7 + 25.0 ** 7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1p = np.degrees(np.arctan2(b1, a1p)) % 360 if c1p else 0.0
    h2p = np.degrees(np.arctan2(b2, a2p)) % 360 if c2p else 0.0
    dl, dc = l2 - l1, c2p - c1p
    dh = 0.0
    if c1p * c2p:
        dh = h2p - h1p
        dh = dh - 360 if dh > 180 else dh + 360 if dh < -180 else dh
    dh_big = 2 * np.sqrt(c1p * c2p) * np.sin(np.radians(dh / 2))
    l_mean, cp_mean = (l1 + l2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        h_mean = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        h_mean = (h1p + h2p) / 2
    else:
        h_mean = (h1p + h2p + 360) / 2 if h1p + h2p < 360 else (h1p + h2p - 360) / 2
    t = (1 - 0.17 * np.cos(np.radians(h_mean - 30)) + 0.24 * np.cos(np.radians(2 * h_mean))
         + 0.32 * np.cos(np.radians(3 * h_mean + 6)) - 0.20 * np.cos(np.radians(4 * h_mean - 63)))
    d_theta = 30 * np.exp(-(((h_mean - 275) / 25) ** 2))
    r_c = 2 * np.sqrt(cp_mean ** 7 / (cp_mean ** 7 + 25.0 ** 7))
    s_l = 1 + 0.015 * (l_mean - 50) ** 2 / np.sqrt(20 + (l_mean - 50) ** 2)
    s_c = 1 + 0.045 * cp_mean
    s_h = 1 + 0.015 * cp_mean * t
    r_t = -np.sin(np.radians(2 * d_theta)) * r_c
    return float(np.sqrt((dl / s_l) ** 2 + (dc / s_c) ** 2 + (dh_big / s_h) ** 2
                         + r_t * (dc / s_c) * (dh_big / s_h)))


def delta_e(colour1, colour2) -> float:
    """CIEDE2000 difference of two matplotlib colours (``"#0072B2"``, ``"tab:blue"``, RGB tuples)."""
    return ciede2000(lab(colour1), lab(colour2))
