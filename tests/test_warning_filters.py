"""pyproject's warning filters: a warning from the code under test fails its test; pytest's own
housekeeping (an unclosed scandir iterator in its tmp_path clean-up) does not fail the run."""

import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

from conftest import REPO

TESTS = '''
import warnings

import numpy as np
from _pytest.pathlib import find_prefixed


def test_housekeeping(tmp_path):
    """What pytest's clean-up of numbered folders leaves when it stops partway through its scan."""
    for name in ("pytest-0", "pytest-1"):
        (tmp_path / name).mkdir()
    next(find_prefixed(tmp_path, "pytest-"))


def test_warns():
    warnings.warn("a warning of the code under test", UserWarning)


def test_divides_by_zero():
    np.float64(1.0) / 0.0


def test_leaves_a_file_open(tmp_path):
    (tmp_path / "edges.txt").write_text("0 1\\n")
    open(tmp_path / "edges.txt")
'''


def test_warnings_of_the_code_fail_and_pytests_housekeeping_does_not(tmp_path):
    (tmp_path / "test_generated.py").write_text(textwrap.dedent(TESTS))
    report = tmp_path / "report.xml"
    command = [sys.executable, "-m", "pytest", "-c", str(REPO / "pyproject.toml"), "--rootdir", str(tmp_path),
               "-p", "no:cacheprovider", "-p", "no:xdist", "--basetemp", str(tmp_path / "base"),
               f"--junitxml={report}", str(tmp_path / "test_generated.py")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    outcomes = {case.get("name"): [child.tag for child in case] for case in ET.parse(report).iter("testcase")}
    assert outcomes == {"test_housekeeping": [], "test_warns": ["failure"], "test_divides_by_zero": ["failure"],
                        "test_leaves_a_file_open": ["failure"]}, result.stdout
    assert result.returncode == 1
    assert "UserWarning: a warning of the code under test" in result.stdout
    assert "RuntimeWarning: divide by zero" in result.stdout
    assert "PytestUnraisableExceptionWarning" in result.stdout and "edges.txt" in result.stdout
