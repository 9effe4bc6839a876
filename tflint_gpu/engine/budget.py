"""A per-file time budget: one file's analysis stops after ``seconds``, the run goes on.

``time_budget(seconds)`` wraps the work on one file (the command line's workers,
the flake8 plugin, the language server: ``lint_source(..., budget=)``). When the
deadline passes, a watchdog thread raises an exception in the thread doing the
work (``PyThreadState_SetAsyncExc``): in the caller's thread, or in the
large-stack thread while a parse runs there for it (``lint.on_large_stack`` arms
that thread for the job, ``armed``). The block then raises ``AnalysisTimeout``,
whose message is the reason (``analysis stopped after N s``).

What an asynchronous exception can stop is Python code: a long parse in
LibCST's native code or a regular expression in C runs to its end first (the
command line's main process also ends a worker far over the budget: ``engine.run``).
The exception injected is a BaseException, so no ``except Exception`` of the
analysis swallows it. Arming and disarming a thread happen under the budget's
lock, and a stop sent to a thread whose work ended first is taken and dropped
there at disarming (``_absorb``): one never reaches a thread after its job is over.
"""
from __future__ import annotations

import contextlib
import heapq
import itertools
import threading
import time
from typing import Iterator, List, Optional, Tuple

# The default budget of one file, seconds (``file-timeout``; 0: none). keras/src's slowest
# file takes well under a second.
DEFAULT_SECONDS = 60.0


class AnalysisTimeout(Exception):
    """The analysis of one file ran past its budget."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"analysis stopped after {format_seconds(seconds)} s")
        self.seconds = seconds


def format_seconds(seconds: float) -> str:
    return f"{seconds:g}"


class _Expired(BaseException):
    """Injected into the working thread when the deadline passes (turned into AnalysisTimeout)."""


_ASYNC_EXC: list = []  # [CPython's PyThreadState_SetAsyncExc, or None], found when a budget is first set


def _set_async_exc():
    """CPython's ``PyThreadState_SetAsyncExc`` through ``ctypes`` (imported here, when a file is first
    analysed under a budget: a run answered from the cache imports no ctypes), or None."""
    if not _ASYNC_EXC:
        try:
            import ctypes

            function = ctypes.pythonapi.PyThreadState_SetAsyncExc
            function.argtypes = (ctypes.c_ulong, ctypes.py_object)
            function.restype = ctypes.c_int
        except (ImportError, AttributeError, OSError):  # pragma: no cover - not CPython
            function = None
        _ASYNC_EXC.append(function)
    return _ASYNC_EXC[0]


def _inject(ident: int, exception: type) -> None:
    """Raise ``exception`` in thread ``ident`` at its next check of the evaluation loop (never cleared
    with NULL: see ``_absorb``)."""
    function = _set_async_exc()
    if function is not None:
        import ctypes

        function(ident, ctypes.py_object(exception))


class Budget:
    """One file's deadline and the threads working for it (the innermost last)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.lock = threading.Lock()
        self.threads: List[int] = []
        self.expired = False
        self.closed = False
        self.injected: Optional[int] = None  # the thread the stop was sent to

    def expire(self) -> None:  # the watchdog's
        with self.lock:
            if self.closed or self.expired or not self.threads:
                return
            self.expired = True
            self.injected = self.threads[-1]
            _inject(self.injected, _Expired)


class _Local(threading.local):
    budget: Optional[Budget] = None


_LOCAL = _Local()


def current() -> Optional[Budget]:
    """The budget the calling thread works under, if any."""
    return _LOCAL.budget


@contextlib.contextmanager
def armed(budget: Optional[Budget]) -> Iterator[None]:
    """This thread works for ``budget`` inside the block: the watchdog may stop it there (and only there)."""
    if budget is None or _LOCAL.budget is budget:
        yield
        return
    ident = threading.get_ident()
    previous = _LOCAL.budget
    with budget.lock:
        budget.threads.append(ident)
    _LOCAL.budget = budget
    raised = False
    try:
        yield
    except _Expired:
        raised = True
        raise
    finally:
        try:
            with budget.lock:
                budget.threads.remove(ident)  # from here on the watchdog sends this thread nothing
                pending = budget.injected == ident and not raised
            if pending:
                _absorb()  # one sent and not yet raised never reaches later code
        finally:
            _LOCAL.budget = previous


def _absorb() -> None:
    """Take a stop sent to this thread that its work ended before raising (the race at the deadline).
    CPython raises it at the next check of its evaluation loop (a loop's backward jump). Clearing it
    with ``PyThreadState_SetAsyncExc(id, NULL)`` instead leaves the interpreter's 'asynchronous
    exception pending' signal set with nothing to raise (CPython 3.11): every later check then takes
    the slow path, and under ``sys.settrace`` (coverage, debuggers) a function's first instruction
    is retried forever."""
    try:
        for _ in range(1000):
            pass
    except _Expired:
        pass


class _Watchdog:
    """One daemon thread a process that expires budgets at their deadlines."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.wake = threading.Condition(self.lock)
        self.heap: List[Tuple[float, int, Budget]] = []
        self.count = itertools.count()
        self.thread: Optional[threading.Thread] = None
        self.pid = 0

    def add(self, budget: Budget) -> None:
        import os

        with self.lock:
            if self.thread is None or self.pid != os.getpid() or not self.thread.is_alive():
                self.heap = [item for item in self.heap if not item[2].closed]
                self.thread = threading.Thread(target=self._serve, name="tflint-gpu-watchdog", daemon=True)
                self.pid = os.getpid()
                self.thread.start()
            heapq.heappush(self.heap, (budget.deadline, next(self.count), budget))
            self.wake.notify()

    def forked(self) -> None:  # in a child: the parent's thread is not there, its lock may be held
        self.lock = threading.Lock()
        self.wake = threading.Condition(self.lock)
        self.heap, self.thread = [], None

    def _serve(self) -> None:
        while True:
            with self.lock:
                while self.heap and self.heap[0][2].closed:
                    heapq.heappop(self.heap)
                if not self.heap:
                    self.wake.wait()
                    continue
                wait = self.heap[0][0] - time.monotonic()
                if wait > 0:
                    self.wake.wait(wait)
                    continue
                budget = heapq.heappop(self.heap)[2]
            budget.expire()


_WATCHDOG = _Watchdog()
if hasattr(__import__("os"), "register_at_fork"):
    __import__("os").register_at_fork(after_in_child=_WATCHDOG.forked)


@contextlib.contextmanager
def time_budget(seconds: Optional[float]) -> Iterator[Optional[Budget]]:
    """Stop the work of the block (one file's) after ``seconds`` with AnalysisTimeout.
    None or 0: no budget; inside another budget's block, that one holds."""
    outer = _LOCAL.budget
    if not seconds or seconds <= 0 or _set_async_exc() is None or (outer is not None and not outer.closed):
        yield outer
        return
    budget = Budget(seconds)
    try:
        with armed(budget):
            _WATCHDOG.add(budget)
            try:
                yield budget
            finally:
                with budget.lock:
                    budget.closed = True
    except _Expired:
        raise AnalysisTimeout(seconds) from None
    except BaseException as error:
        # Raised as an effect of the stop (re-raised by a handler as another error): still the budget.
        if budget.expired and not isinstance(error, (KeyboardInterrupt, SystemExit, GeneratorExit)):
            raise AnalysisTimeout(seconds) from None
        raise
