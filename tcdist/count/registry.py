"""The kernel registry: every module of ``tcdist.count.kernels`` declares one ``KERNEL``, and
this finds them, so adding a kernel touches no central file.

A kernel counts the triangles of one oriented CSR whose lowest-rank vertex is local
(``count(rowptr, col, n_local, **options) -> int``). Rows are sorted, and ids follow the
orientation within the local vertices and within the proxies: every edge u -> v has u < v except
a proxy's edge to a local vertex (parts are numbered so; stores and Graph inputs are checked).
It declares its backend, its options (each with its allowed values and default, checked once
when a run starts), optionally a prepare step (``prepare(rowptr, col, n_local, **options)``:
edge lists, wedge offsets, bitmaps; timed as prepare, and handed to count as ``prepared=``)
and, on the GPU, its own CUDA sources, compiled as a module of their own. On the command line a kernel and its
options are one spec: ``lstc-group:tile=256,group=16``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from tcdist.errors import TcdistError


@dataclass(frozen=True)
class Option:
    name: str
    choices: tuple           # the values allowed (ints or bools)
    default: object
    help: str = ""


@dataclass(frozen=True)
class Kernel:
    name: str
    backend: str             # 'cpu' or 'gpu'
    summary: str
    count: Callable[..., int]  # count(rowptr, col, n_local, **options)
    options: tuple[Option, ...] = ()
    prepare: Callable | None = None  # prepare(rowptr, col, n_local, **options) -> what count gets as prepared=
    extra_bytes: Callable | None = None  # (v_res, e_res, n_local, col_bytes, **options) -> device bytes prepare adds
    sources: tuple[str, ...] = ()  # GPU: its files under count/cuda (after common.cuh)
    instantiations: Callable[[], list[str]] | None = None  # GPU: the template instances, as C++ declarations
    part_order: bool = False  # relies on the exception above being the only one (proxies ordered among
                              # themselves): true of parts and the whole graph, not of a part's slices

    def configure(self, given: dict[str, str]) -> dict:
        """The options as the kernel takes them: every one given checked against its choices,
        the others at their defaults."""
        known = {o.name: o for o in self.options}
        unknown = sorted(set(given) - set(known))
        if unknown:
            allowed = ", ".join(known) or "none"
            raise TcdistError(f"kernel {self.name} has no option {', '.join(unknown)} (its options: {allowed})")
        chosen = {}
        for option in self.options:
            if option.name not in given:
                chosen[option.name] = option.default
                continue
            text = given[option.name]
            by_text = {str(c).lower(): c for c in option.choices}
            if text.lower() not in by_text:
                raise TcdistError(f"kernel {self.name}: {option.name} must be one of "
                                  f"{', '.join(map(str, option.choices))}, got '{text}'")
            chosen[option.name] = by_text[text.lower()]
        return chosen

    def run(self, rowptr, col, n_local, options: dict) -> int:
        """Prepare (if the kernel has that step) and count, in one call: for warm-ups, tests and
        benchmarks (a run times the two apart)."""
        given = {} if self.prepare is None else {"prepared": self.prepare(rowptr, col, n_local, **options)}
        return self.count(rowptr, col, n_local, **given, **options)

    def describe(self) -> list[str]:
        """Its lines in `tcdist kernels`: the name, what it is, then each option, its values and default."""
        return [f"{self.name} ({self.backend}): {self.summary}",
                *(f"    {o.name}={'|'.join(str(c).lower() if isinstance(c, bool) else str(c) for c in o.choices)} "
                  f"[{str(o.default).lower() if isinstance(o.default, bool) else o.default}]"
                  f"{f': {o.help}' if o.help else ''}" for o in self.options)]


@cache
def kernels() -> dict[str, Kernel]:
    """Every kernel, by name (modules are imported here; a GPU kernel's module imports no CuPy)."""
    from tcdist.count import kernels as package

    found = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        kernel = importlib.import_module(f"{package.__name__}.{info.name}").KERNEL
        if kernel.name in found:
            raise TcdistError(f"internal error: two kernels are named {kernel.name}")
        found[kernel.name] = kernel
    return found


def of_backend(backend: str) -> dict[str, Kernel]:
    return {name: k for name, k in kernels().items() if k.backend == backend}


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """'lstc-group:tile=256,group=16' -> ('lstc-group', {'tile': '256', 'group': '16'})."""
    name, _, rest = spec.partition(":")
    given = {}
    for item in filter(None, rest.split(",")):
        key, equals, value = item.partition("=")
        if not equals or not key.strip() or not value.strip():
            raise TcdistError(f"kernel spec '{spec}': write options as NAME:OPTION=VALUE,OPTION=VALUE")
        given[key.strip()] = value.strip()
    return name.strip(), given


def spec_of(name: str, options: dict) -> str:
    """The spec that runs a kernel with these options again: 'lstc:tile=128'."""
    text = ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in options.items())
    return f"{name}:{text}" if text else name


def choose(backend: str, spec: str) -> tuple[Kernel, dict]:
    """The kernel a spec names on a backend and its checked options (auto is count/auto.py's)."""
    mine = of_backend(backend)
    name, given = parse_spec(spec)
    if name == "auto":  # (resolve takes a plain auto before here)
        raise TcdistError(f"kernel auto takes no options (given '{spec}'); name a kernel to give it options")
    if name not in mine:
        elsewhere = kernels().get(name)
        hint = f"; it is a {elsewhere.backend} kernel" if elsewhere else ""
        raise TcdistError(f"unknown {backend} kernel '{name}' (choose from {', '.join(mine)}){hint}")
    return mine[name], mine[name].configure(given)
