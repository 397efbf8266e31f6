"""Kernel-free live figures: data computed here at build time, drawn and redrawn in the reader's browser.

A :class:`LiveFigure` displays in a notebook as HTML: a ``<div class="probdr-live">`` holding a JSON spec (the
controls, the panels, the numbers to print, and the data as base64 typed arrays). On the book's web page the
script ``live.js`` (next to this file; ``tools/sphinx_local_assets.py`` copies it into the site and loads it on
every page with a live figure) builds labelled controls, one canvas per panel and the list of current numbers, and
redraws when a control moves. Nothing runs on a server, so the rendered site needs no kernel.

Most figures are precomputed over a grid of their controls (every array names the controls it depends on, in
order, and is stored cell after cell, row-major). Scatter coordinates are quantised per frame, inside that frame's
bounding box, to 8 or 16 bits (:func:`points`). Chapter 5's toy is small enough to be computed in the browser from
the same equations as :mod:`probdr_lite.unrolled` (``spec["toy"]``); the book's tests compare the two.

A figure too large for its page keeps its points in *chunks*, one per setting of some of its controls
(``spec["chunks"] = {"dims": [...], "grid": [...]}``, ``LiveFigure(chunks=[...])``, one dict of arrays per cell,
row-major). In a notebook they follow the spec in the same output; ``tools/sphinx_local_assets.py`` moves them into
one static file per setting of the book's site, which the page loads when the reader first picks that setting.
Each chunk must stay within ``max_chunk_bytes``.

The builders for the chapters are in :mod:`probdr_lite.presentation.live.builders`.
"""

from __future__ import annotations

import base64
import html
import itertools
import json
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from probdr_lite._validation import check_choice, check_length, check_scalar

__all__ = [
    "ASSET_FILES",
    "LiveFigure",
    "MAX_CHUNK_BYTES",
    "MAX_LIVE_BYTES",
    "array",
    "asset_text",
    "control",
    "decode_points",
    "points",
]

#: The files the web page needs, in this package (copied into the site by tools/sphinx_local_assets.py).
ASSET_FILES = ("live.js", "live.css")

#: Size budget of one live figure's HTML on its page (the page budget is 5 MB; leave room for the rest of the page).
MAX_LIVE_BYTES = 3_000_000

#: Size budget of one chunk (the points of one setting, as the JSON the site serves).
MAX_CHUNK_BYTES = 300_000

_DTYPES = {"u8": np.uint8, "u16": np.uint16, "f32": np.float32, "f64": np.float64}


def asset_text(name: str) -> str:
    """The text of ``live.js`` or ``live.css``."""
    check_choice(name, "name", ASSET_FILES)
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def _b64(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()).decode("ascii")


def array(values, dims=(), dtype: str = "f64") -> dict:
    """An array for the spec: ``values`` has one axis per control in ``dims`` (in order), then the item axes."""
    check_choice(dtype, "dtype", sorted(_DTYPES))
    a = np.asarray(values, dtype=_DTYPES[dtype])
    dims = list(dims)
    if a.ndim < len(dims):
        raise ValueError(f"values must have at least {len(dims)} axes (one per dim {dims}); got shape {a.shape}")
    return {"dims": dims, "grid": list(a.shape[: len(dims)]), "item": list(a.shape[len(dims):]), "dtype": dtype,
            "b64": _b64(a)}


def points(xy, dims=(), bits: int = 8, box=None) -> dict:
    """Scatter coordinates (..., n, 2), one frame per grid cell, quantised to ``bits`` bits inside each frame's box.

    NaN coordinates (no point) get the largest code. ``box`` (xmin, xmax, ymin, ymax) fixes the box of every frame;
    by default each frame's own bounding box is used, so the error is at most half a step of 1/254 (8 bits) or
    1/65534 (16 bits) of that frame's extent: below a pixel in a figure of 250 pixels at 8 bits.
    """
    bits = check_choice(check_scalar(bits, "bits", integer=True), "bits", (8, 16))
    xy = np.asarray(xy, dtype=np.float64)
    dims = list(dims)
    if xy.ndim != len(dims) + 2 or xy.shape[-1] != 2:
        raise ValueError(f"xy must have shape (grid..., n, 2) with one grid axis per dim {dims}; got {xy.shape}")
    grid, n = xy.shape[: len(dims)], xy.shape[-2]
    frames = xy.reshape(-1, n, 2)
    top = 255 if bits == 8 else 65535
    levels = top - 1
    boxes = np.empty((frames.shape[0], 4))
    codes = np.full(frames.shape, top, dtype=np.uint8 if bits == 8 else np.uint16)
    for f, P in enumerate(frames):
        ok = np.isfinite(P).all(1)
        if box is not None:
            b = np.asarray(box, dtype=np.float64)
        elif ok.any():
            b = np.array([P[ok, 0].min(), P[ok, 0].max(), P[ok, 1].min(), P[ok, 1].max()])
        else:
            b = np.array([-1.0, 1.0, -1.0, 1.0])
        b[1] = max(b[1], b[0] + 1e-12 * max(1.0, abs(b[0])))
        b[3] = max(b[3], b[2] + 1e-12 * max(1.0, abs(b[2])))
        boxes[f] = b
        q = np.rint((P[ok] - b[[0, 2]]) / (b[[1, 3]] - b[[0, 2]]) * levels)
        codes[f, ok] = np.clip(q, 0, levels)
    return {"dims": dims, "grid": list(grid), "item": [n, 2],
            "q": array(codes.reshape(*grid, n, 2), dims, "u8" if bits == 8 else "u16"),
            "box": array(boxes.reshape(*grid, 4), dims, "f64")}


def decode_points(ref: dict) -> np.ndarray:
    """The coordinates a :func:`points` reference decodes to in the browser (grid..., n, 2); for the tests."""
    q = np.frombuffer(base64.b64decode(ref["q"]["b64"]), dtype=_DTYPES[ref["q"]["dtype"]]).astype(np.float64)
    box = np.frombuffer(base64.b64decode(ref["box"]["b64"]), dtype=np.float64).reshape(-1, 4)
    n = ref["item"][0]
    top = 255 if ref["q"]["dtype"] == "u8" else 65535
    q = q.reshape(-1, n, 2)
    out = np.empty_like(q)
    out[..., 0] = box[:, None, 0] + (box[:, None, 1] - box[:, None, 0]) * q[..., 0] / (top - 1)
    out[..., 1] = box[:, None, 2] + (box[:, None, 3] - box[:, None, 2]) * q[..., 1] / (top - 1)
    out[q == top] = np.nan
    return out.reshape(*ref["grid"], n, 2)


def control(name: str, label: str, values, default, kind: str = "range", labels=None, digits: int = 3) -> dict:
    """One control of a live figure: a range over ``values`` (indices on the page), a select or a checkbox.

    ``default`` is one of ``values``. The page prints the current value beside the control (``labels`` if
    given, else the value to ``digits`` significant digits) and gives the range input that text as
    ``aria-valuetext``.
    """
    check_choice(kind, "kind", ("range", "select", "checkbox"))
    values = [v.item() if isinstance(v, np.generic) else v for v in values]
    check_scalar(len(values), f"control {name!r} len(values)", low=2, integer=True)
    check_choice(default, f"control {name!r} default", values)
    if labels is not None:
        check_length(labels, f"control {name!r} labels", len(values), "value")
    out = {"name": name, "label": label, "kind": kind, "values": values, "default": values.index(default),
           "digits": int(digits)}
    if labels is not None:
        out["labels"] = [str(s) for s in labels]
    return out


def grid_cells(controls, dims):
    """Every cell of the grid over the controls named in ``dims``: iterator of (index tuple, value dict)."""
    by_name = {c["name"]: c for c in controls}
    axes = [range(len(by_name[d]["values"])) for d in dims]
    for idx in itertools.product(*axes):
        yield idx, {d: by_name[d]["values"][i] for d, i in zip(dims, idx)}


def _json(value) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")


@dataclass
class LiveFigure:
    """A kernel-free live figure; displays as HTML (see the module docstring).

    Attributes
    ----------
    spec : dict
        What ``live.js`` draws: ``controls``, ``panels``, ``readouts``, optional ``toy``, ``chunks``, ``caption``,
        ``height``.
    name : str
        Used in the element id (``probdr-live-<name>``), so the tests can find the figure.
    max_bytes : int
        The HTML that stays on the page (everything but the chunks) may not be larger (``ValueError`` otherwise),
        so a page never silently outgrows its budget.
    chunks : list of dict, optional
        One dict of arrays per cell of ``spec["chunks"]["grid"]`` (row-major), for a figure whose points are
        loaded per setting.
    max_chunk_bytes : int
        Budget of each chunk's JSON.
    """

    spec: dict
    name: str
    max_bytes: int = MAX_LIVE_BYTES
    chunks: list | None = field(default=None, repr=False)
    max_chunk_bytes: int = MAX_CHUNK_BYTES
    _html: str | None = field(default=None, repr=False)
    _chunk_json: list | None = field(default=None, repr=False)

    def __post_init__(self):
        names = [c["name"] for c in self.spec.get("controls", [])]
        if len(set(names)) != len(names) or not names:
            raise ValueError(f"a live figure needs controls with distinct names; got {names}")
        meta = self.spec.get("chunks")
        if (meta is None) != (self.chunks is None):
            raise ValueError("spec['chunks'] and chunks go together: give both or neither")
        if meta is not None:
            for d in meta["dims"]:
                check_choice(d, "spec['chunks']['dims'] entry", names)
            sizes = {c["name"]: len(c["values"]) for c in self.spec["controls"]}
            grid = [sizes[d] for d in meta["dims"]]
            if list(meta["grid"]) != grid:
                raise ValueError(f"spec['chunks']['grid'] must be {grid}; got {meta['grid']}")
            check_length(self.chunks, "chunks", int(np.prod(grid)), f"cell of {meta['dims']}")
            self._chunk_json = [_json(c) for c in self.chunks]
            big = max(len(j.encode()) for j in self._chunk_json)
            if big > self.max_chunk_bytes:
                raise ValueError(f"the live figure {self.name!r} has a chunk of {big:,} bytes, over max_chunk_bytes = "
                                 f"{self.max_chunk_bytes:,}; use fewer points or fewer frames per chunk")
        if self.n_bytes > self.max_bytes:
            raise ValueError(f"the live figure {self.name!r} is {self.n_bytes:,} bytes, over max_bytes = "
                             f"{self.max_bytes:,}; use a coarser grid or fewer points")

    @property
    def element_id(self) -> str:
        return f"probdr-live-{self.name}"

    @property
    def html(self) -> str:
        """The HTML of the output: the figure's element with its spec and, if any, its chunks."""
        if self._html is None:
            self._html = self._page_html(chunks=True)
        return self._html

    def _page_html(self, chunks: bool) -> str:
        tail = ""
        if chunks and self._chunk_json is not None:
            tail = ('<script type="application/json" class="probdr-live-chunks">[' + ",".join(self._chunk_json)
                    + "]</script>")
        return (
            f'<div class="probdr-live" id="{html.escape(self.element_id)}" data-probdr-live="1">'
            # only a browser without JavaScript shows this; the page's text otherwise holds no sentence about the page
            '<noscript><p class="probdr-live-fallback"><em>This figure is drawn by JavaScript, which this browser '
            "does not run.</em></p></noscript>"
            f'<script type="application/json" class="probdr-live-spec">{_json(self.spec)}</script>{tail}</div>'
        )

    @property
    def n_bytes(self) -> int:
        """Bytes of the HTML that stays on the page (without the chunks, which the site serves as files)."""
        return len(self._page_html(chunks=False).encode("utf-8"))

    @property
    def chunk_bytes(self) -> list:
        """Bytes of each chunk's JSON (empty without chunks)."""
        return [len(j.encode("utf-8")) for j in self._chunk_json or []]

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        extra = f", {len(self.chunk_bytes)} chunks of at most {max(self.chunk_bytes):,} bytes" if self.chunks else ""
        return f"LiveFigure({self.name!r}, {self.n_bytes:,} bytes{extra})"
