"""Progress of a long run on stderr (``checking 120/770 files``), only when stderr is a terminal.

Never in piped or redirected output: the line is drawn only on a TTY, only once the run has
lasted ``DELAY`` seconds (a short run shows nothing), redrawn at most every ``INTERVAL`` seconds,
and erased when the run ends, so what follows prints on a clean line.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from typing import Optional, TextIO

DELAY = 0.5  # seconds before the first line
INTERVAL = 0.25  # seconds between two lines: at most four a second
_CLEAR = "\r\x1b[K"  # to the start of the line, and erase it


def on_terminal(stream: TextIO) -> bool:
    """Is ``stream`` an interactive terminal that understands the erase sequence?"""
    try:
        return bool(stream.isatty()) and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError, OSError):  # closed, or not a file
        return False


class Progress:
    """``with Progress(total, "files", "checking") as progress: ... progress(done)``."""

    def __init__(self, total: int, noun: str = "files", verb: str = "checking",
                 stream: Optional[TextIO] = None, enabled: Optional[bool] = None) -> None:
        self.total = total
        self.noun = noun
        self.verb = verb
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = on_terminal(self.stream) if enabled is None else enabled
        self.start = time.monotonic()
        self.last: Optional[float] = None
        self.drawn = False
        self.lock = threading.Lock()  # verify's threads report as they finish

    def __call__(self, done: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        with self.lock:
            if now - self.start < DELAY or (self.last is not None and now - self.last < INTERVAL):
                return
            self.last = now
            try:
                self.stream.write(f"{_CLEAR}{self.verb} {done}/{self.total} {self.noun}")
                self.stream.flush()
                self.drawn = True
            except (OSError, ValueError):  # the terminal went away: stop drawing
                self.enabled = False

    def close(self) -> None:
        with self.lock:
            if self.drawn:
                try:
                    self.stream.write(_CLEAR)
                    self.stream.flush()
                except (OSError, ValueError):
                    pass
                self.drawn = False
            self.enabled = False

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
