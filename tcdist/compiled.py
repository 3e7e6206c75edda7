"""Numba, loaded when tcdist first calls a compiled function: a run that calls none (a count on
the GPU) neither imports it (0.3-0.5 s) nor starts its CPU target and thread pool.

A module declares its compiled functions with `@jit(...)` (numba.njit's options) and loops over
`prange`; its Python code asks for `get_threads()` and sets `set_threads(n)`. The first call of any
compiled function imports Numba and makes every declared function Numba's (each compiles, or
loads from Numba's cache, when first called, as with njit); compiled code calls a declared
function as that Numba function, and its `prange` becomes numba.prange. Python code always calls
through the declared function, so a thread count set before the load (this thread's wish) is
given to Numba when its thread first calls compiled code, whichever thread loaded Numba.

Numba keeps tcdist's compiled functions in caches.numba_folder(), through a cache locator of
tcdist's own that only tcdist's modules use: Numba's default puts them beside the installed
package, and setting NUMBA_CACHE_DIR would move every other library's cache in the process too.
A process that has compiled for a second says why it waits, once, on a terminal (progress.note).
While the cache is not warm (`beside_others`), processes may compile the same function at once (a
warm-up's workers, and runs): each compiles a function's new signature holding that function's lock
in the cache folder, so that the second to come waits and loads what the first compiled.
Each thread's seconds of loading Numba and compiling are kept (`spent`), so that a step that
compiled reports them as compiling, not as its own work (results.Timings.add); a step whose work
runs on a pool's threads takes on their compiling (`threads_map`, `charged`).
"""

import fcntl
import os
import threading
import time

from tcdist import caches, progress
from tcdist.budget import host
from tcdist.errors import TcdistError

NOTICE_AFTER = 1.0  # seconds of compiling after which a terminal is told why the run waits

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep

_numba = None  # the module, once loaded
load_seconds = 0.0  # what loading it took
_spent = threading.local()  # .seconds: this thread's loading of Numba and compiling
when_loaded = []  # called once Numba is loaded (tcdist.warm's background warm-up)
_declared = []  # every Compiled made before then
_lock = threading.RLock()
_wish = threading.local()  # .threads: this thread's count, .pending: not yet given to Numba
beside_others = False  # set while the cache is not warm: other processes may be compiling into it


def prange(*args):
    """range in Python; numba.prange in compiled code."""
    return range(*args)


class Compiled:
    """A function Numba compiles when it is first called (its dispatcher's attributes are its own)."""

    def __init__(self, func, options: dict):
        self.py_func, self.options, self.dispatcher = func, options, None
        self.__name__, self.__qualname__, self.__doc__ = func.__name__, func.__qualname__, func.__doc__
        self.__module__ = func.__module__

    def __call__(self, *args):
        if self.dispatcher is None or getattr(_wish, "pending", False):
            _ready()
        if beside_others or host.is_bounded():
            signature = tuple(self.dispatcher.typeof_pyval(arg) for arg in args)
            if signature not in self.dispatcher.overloads:
                with host.code_loading():  # a function loaded or compiled: the process's code, not the count's data
                    self.compile_alone(signature) if beside_others else self.dispatcher.compile(signature)
        return self.dispatcher(*args)

    def compile_alone(self, signature: tuple) -> None:
        """Compile (or load) signature holding this function's lock in the cache folder: another
        process compiling it meanwhile is waited for, and its work loaded from the cache."""
        _ready()
        folder = os.path.join(caches.numba_folder(), "compiling")
        try:
            os.makedirs(folder, exist_ok=True)
            lock = open(os.path.join(folder, f"{self.__module__}.{self.__qualname__}.lock"), "a")
        except OSError:  # a read-only cache: nothing is shared through it
            self.dispatcher.compile(signature)
            return
        with lock:
            waited = time.perf_counter()
            fcntl.flock(lock, fcntl.LOCK_EX)
            _add_spent(time.perf_counter() - waited)  # another process's compiling, waited for
            self.dispatcher.compile(signature)

    def __getattr__(self, name):  # (stats, signatures, ...: the dispatcher's)
        if name.startswith("__"):
            raise AttributeError(name)
        _ready()
        return getattr(self.dispatcher, name)


def jit(**options):
    """numba.njit(**options), made when compiled code is first called."""

    def declare(func):
        compiled = Compiled(func, options)
        with _lock:
            if _numba is None:
                _declared.append(compiled)
            else:
                _make(compiled)
        return compiled

    return declare


def most_threads() -> int:
    """The threads Numba starts (NUMBA_NUM_THREADS, else the cores this process may run on)."""
    if _numba is not None:
        return _numba.config.NUMBA_NUM_THREADS
    given = os.environ.get("NUMBA_NUM_THREADS", "").strip()
    if given:
        if not given.isdigit() or int(given) < 1:
            raise TcdistError(f"NUMBA_NUM_THREADS={given}: not a number of threads; give a positive integer, or "
                              "unset it")
        return int(given)
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def get_threads() -> int:
    """The threads this thread's compiled code runs on."""
    if _numba is not None and not getattr(_wish, "pending", False):
        return _numba.get_num_threads()
    return getattr(_wish, "threads", most_threads())


def set_threads(count: int) -> None:
    """Run this thread's compiled code on count threads (Numba's setting is each thread's own)."""
    if _numba is not None:
        _numba.set_num_threads(count)
        _wish.pending = False
    else:
        _wish.threads, _wish.pending = count, True


def spent() -> float:
    """Seconds this thread has spent loading Numba and compiling (a function's load from the cache
    aside): what a step that called compiled code waited for that was not its own work."""
    return getattr(_spent, "seconds", 0.0)


def _add_spent(seconds: float) -> None:
    _spent.seconds = spent() + seconds


def charged(work, *args) -> tuple:
    """(work(*args), the seconds this thread spent compiling in it): for work on another thread,
    whose compiling the thread waiting for it then takes on (charge)."""
    before = spent()
    return work(*args), spent() - before


def charge(seconds: float) -> None:
    """Take on seconds of another thread's compiling that this one waited for."""
    _add_spent(seconds)


def threads_map(pool, work, *iterables) -> list:
    """list(pool.map(work, *iterables)), the longest compiling of any one call taken on by this
    thread: a step whose threads waited for a compile reports it as compile, not as its work."""
    done = list(pool.map(lambda *args: charged(work, *args), *iterables))
    charge(max((seconds for _, seconds in done), default=0.0))
    return [result for result, _ in done]


def is_loaded() -> bool:
    """Whether Numba is loaded (a compiled function has been called)."""
    return _numba is not None


def loaded():
    """Numba, loaded now if it was not yet (for what only it can say, such as its threading layer)."""
    _ready()
    return _numba


def _ready() -> None:
    global _numba, load_seconds
    loading = False
    with _lock:
        if _numba is None:
            loading = True
            started = time.perf_counter()
            with host.code_loading():
                import numba
                from numba.extending import typeof_impl

                # compiled code calls a Compiled as the Numba function it holds
                typeof_impl.register(Compiled)(lambda value, context: numba.typeof(value.dispatcher))
                _keep_cache_in_tcdist_folder(numba)
                _tell_a_terminal_when_compiling_is_long()
                _numba = numba
                for compiled in _declared:
                    _make(compiled)
            load_seconds = time.perf_counter() - started
            _add_spent(load_seconds)
    if loading:
        for call in when_loaded:
            call()
    if getattr(_wish, "pending", False):
        _wish.pending = False
        _numba.set_num_threads(min(_wish.threads, _numba.config.NUMBA_NUM_THREADS))


def _make(compiled: Compiled) -> None:
    _give_prange(compiled.py_func.__globals__)
    compiled.dispatcher = _numba.njit(**compiled.options)(compiled.py_func)


def _give_prange(names: dict) -> None:
    if names.get("prange") is prange:
        names["prange"] = _numba.prange


def _keep_cache_in_tcdist_folder(numba) -> None:
    """Put first among Numba's cache locators one that keeps the functions of tcdist's modules
    in caches.numba_folder() (named as Numba's NUMBA_CACHE_DIR locator names them there)."""
    from numba.core import caching

    class TcdistFolder(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        def __init__(self, py_func, py_file):
            self._py_file, self._lineno = py_file, py_func.__code__.co_firstlineno
            self._cache_path = os.path.join(caches.numba_folder(), self.get_suitable_cache_subpath(py_file))

        def get_cache_path(self):
            return self._cache_path

        @classmethod
        def from_function(cls, py_func, py_file):
            if os.path.abspath(py_file).startswith(_PACKAGE):
                return super().from_function(py_func, py_file)
            return None

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # (its name in older Numba)
    impl._locator_classes.insert(0, TcdistFolder)


def _tell_a_terminal_when_compiling_is_long() -> None:
    """Have Numba tell a _CompileNotice of its compiles (those of functions missing from the cache)."""
    from numba.core import event

    notice = _CompileNotice()

    class Listener(event.Listener):
        def on_start(self, event):
            notice.started()

        def on_end(self, event):
            notice.ended()

    event.register("numba:compile", Listener())


class _CompileNotice:
    """Each thread's compiling added to its spent(); once compiling has taken NOTICE_AFTER seconds in
    this process, the terminal is told, once, what it waits for (a timer fires while a long compile
    is still under way)."""

    def __init__(self):
        self.spent = 0.0  # seconds of compiling before the ones under way
        self.said = False
        self._thread = threading.local()  # .depth: a compile's callees compile inside it; .began
        self._timer, self._guard = None, threading.Lock()

    def started(self) -> None:
        self._thread.depth = getattr(self._thread, "depth", 0) + 1
        if self._thread.depth == 1:
            self._thread.began = time.perf_counter()
            self._thread.code = host.code_loading()  # what compiling takes of memory: code, not the count's
            self._thread.code.__enter__()
            with self._guard:
                if self.said or self._timer is not None:
                    return
                if self.spent >= NOTICE_AFTER:
                    self.say()
                    return
                self._timer = threading.Timer(NOTICE_AFTER - self.spent, self.say)
                self._timer.daemon = True
                self._timer.start()

    def ended(self) -> None:
        self._thread.depth -= 1
        if self._thread.depth == 0:
            self._thread.code.__exit__(None, None, None)
            took = time.perf_counter() - self._thread.began
            _add_spent(took)
            with self._guard:
                self.spent += took
                if self._timer is not None:
                    self._timer.cancel()
                    self._timer = None

    def say(self) -> None:
        if not self.said:
            self.said = True
            progress.note(f"compiling tcdist's CPU functions, once: later runs load them from "
                          f"{caches.numba_folder()}")
