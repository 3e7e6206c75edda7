"""Progress bars for long steps: shown on a terminal only (a pty too: script, tmux), after one
second, never in --json mode or in logs. A bar is redrawn every second by a thread of its own,
so a step whose work comes in few large pieces (a build, one big part) still moves, and one
that never reports progress still appears."""

import functools
import sys
import threading
import time

_enabled = False
_TICK = 1.0  # seconds between redraws


def enable(on):
    """Turn bars on (CLI on a TTY) or off (API, logs, --json)."""
    global _enabled
    _enabled = bool(on) and sys.stderr.isatty()



def note(text):
    """A line on the terminal, above any bar drawn there; nothing unless enabled."""
    if _enabled:
        _ticking().write(text, file=sys.stderr)

class _Silent:
    """A bar that is never drawn, as a disabled tqdm: update() counts nothing."""

    n = 0

    def update(self, n=1):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


@functools.cache
def _ticking():
    from tqdm import tqdm  # only where a bar may be drawn: tqdm takes a tenth of a second to import

    class Ticking(tqdm):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._closed = threading.Event()
            threading.Thread(target=self._tick, name="tcdist-progress", daemon=True).start()

        def _tick(self):
            while not self._closed.wait(_TICK):
                if time.time() - self.start_t >= self.delay:
                    self.refresh()

        def close(self):
            self._closed.set()
            super().close()

    return Ticking


def bar(total, desc, unit="it", scale=False):
    """A bar that stays silent unless enabled and the step lasts over a second."""
    if not _enabled:
        return _Silent()
    return _ticking()(total=total, desc=desc, unit=unit, unit_scale=scale, delay=1.0, leave=False, file=sys.stderr)


def iterate(items, total, desc):
    """Items of an iterable, with a bar over them."""
    with bar(total, desc) as b:
        for item in items:
            yield item
            b.update()
