"""The project's files: one version, written once, that every way of asking agrees on."""

import ast
import importlib.metadata
import json

import pytest
from conftest import REPO, run_module

import tcdist


def test_the_version_is_written_once_in_the_package():
    """pyproject takes it from tcdist.__version__; setuptools reads a literal there without importing tcdist."""
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in Python 3.11 and later")
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "version" not in config["project"] and config["project"]["dynamic"] == ["version"]
    assert config["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "tcdist.__version__"}
    tree = ast.parse((REPO / "tcdist" / "__init__.py").read_text())
    literals = [node.value.value for node in tree.body if isinstance(node, ast.Assign)
                and [getattr(t, "id", None) for t in node.targets] == ["__version__"]
                and isinstance(node.value, ast.Constant)]
    assert literals == [tcdist.__version__]
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["tcdist"]
    assert (REPO / "tcdist" / "py.typed").is_file()


def test_the_command_line_says_the_package_version():
    result = run_module("--version")
    assert (result.returncode, result.stdout) == (0, f"tcdist {tcdist.__version__}\n")


def test_the_installed_metadata_says_the_package_version():
    """The installed distribution of this checkout (pip writes where it came from in
    direct_url.json; a build's tcdist.egg-info in the checkout, found first from here, has none)."""
    urls = {}
    for dist in importlib.metadata.distributions(name="tcdist"):
        urls[json.loads(dist.read_text("direct_url.json") or "{}").get("url")] = dist
    if REPO.as_uri() not in urls:
        pytest.skip(f"tcdist is not installed from this checkout ({REPO}): no metadata of it to compare")
    assert urls[REPO.as_uri()].version == tcdist.__version__
