"""--help as a terminal of 80 columns shows it: every positional and option has help, each at
most three lines (the details are in docs/)."""

import os
import re

import pytest
from conftest import run_module

COMMANDS = [[], ["count"], ["partition"], ["info"], ["convert"], ["generate"], ["kernels"], ["list"], ["warm-up"]]


def entries(text):
    """{invocation: lines of help} of every entry under 'positional arguments:' and 'options:'."""
    found, current, listing = {}, None, False
    for line in text.splitlines():
        if line in ("positional arguments:", "options:"):
            listing, current = True, None
        elif not line.strip() or not line.startswith(" "):
            listing = False
        elif listing and re.match(r"( {2}| {4})\S", line):  # an entry, or a subcommand under COMMAND
            invocation, *help_start = re.split(r"\s{2,}", line.strip(), maxsplit=1)
            current = invocation
            found[current] = len(help_start)
        elif listing and current is not None:
            found[current] += 1
    return found


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "tcdist")
def test_every_option_has_help_of_at_most_three_lines_at_80_columns(command):
    result = run_module(*command, "--help", env={**os.environ, "COLUMNS": "80"})
    assert result.returncode == 0, result.stderr
    found = entries(result.stdout)
    assert "-h, --help" in found
    assert {name: lines for name, lines in found.items() if not 1 <= lines <= 3} == {}, result.stdout


def test_count_help_says_dash_reads_standard_input():
    text = " ".join(run_module("count", "--help", env={**os.environ, "COLUMNS": "80"}).stdout.split())
    assert "- for standard input" in text
