"""The one progress helper: tqdm bars for long work (UMAP epochs, border rounds, labelling per
topic, seeds), on stderr and only when stderr is a terminal. Piped into a file, a log or CI,
the output stays plain lines; the logged summaries are the same either way.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext

from tqdm import tqdm


def enabled(stream=None) -> bool:
    """Whether bars are shown: `stream` (default: stderr, where they go) is a terminal."""
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def bar(iterable: Iterable | None = None, *, desc: str, total: int | None = None, unit="it"):
    """A tqdm bar over `iterable` (or updated by hand), gone when done; off when not a terminal."""
    return tqdm(
        iterable,
        desc=desc,
        total=total,
        unit=unit,
        disable=not enabled(),
        leave=False,
        file=sys.stderr,
        dynamic_ncols=True,
    )


@contextmanager
def task(desc: str) -> Iterator[None]:
    """One step of unknown length (HDBSCAN inside BERTopic's fit): its name while it runs."""
    with tqdm(
        total=1,
        desc=desc,
        disable=not enabled(),
        leave=False,
        file=sys.stderr,
        bar_format="{desc} ({elapsed})",
    ) as step:
        yield
        step.update()


def umap_kwds(desc: str) -> dict:
    """`tqdm_kwds` for UMAP: its epochs bar with our name, shown as our bars are (UMAP's own
    `verbose` would also print its steps' timestamps)."""
    return {"desc": desc, "disable": not enabled(), "leave": False, "dynamic_ncols": True}


@contextmanager
def model_loading() -> Iterator[None]:
    """Loading the embedding model: transformers' own "Loading weights" bar only where ours
    would show; its setting is put back after."""
    from transformers.utils import logging as hf_logging

    was_on = hf_logging.is_progress_bar_enabled()
    if not enabled():
        hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            hf_logging.enable_progress_bar()
        else:
            hf_logging.disable_progress_bar()


def logs_above_bars():
    """While inside, log lines are written above the bars instead of through them (nothing
    changes where bars are off)."""
    if not enabled():
        return nullcontext()
    from tqdm.contrib.logging import logging_redirect_tqdm

    return logging_redirect_tqdm()
