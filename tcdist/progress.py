"""Progress bars for long steps: shown on a terminal only, after one second, never in --json mode."""

import sys

from tqdm import tqdm

_enabled = False


def enable(on):
    """Turn bars on (CLI on a TTY) or off (API, logs, --json)."""
    global _enabled
    _enabled = bool(on) and sys.stderr.isatty()


def bar(total, desc, unit="it", scale=False):
    """A tqdm bar that stays silent unless enabled and the step lasts over a second."""
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        unit_scale=scale,
        disable=not _enabled,
        delay=1.0,
        leave=False,
        file=sys.stderr,
    )


def iterate(items, total, desc):
    """Items of an iterable, with a bar over them."""
    with bar(total, desc) as b:
        for item in items:
            yield item
            b.update()
