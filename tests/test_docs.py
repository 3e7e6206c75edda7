"""The documentation: the site builds with MkDocs in strict mode (a broken link or page is an
error), and every `bash` and `python` block of README.md and docs/ runs as written, in a folder of
its own (blocks fenced `sh` or `text` need a GPU, a cluster or a site's MPI: shown, not run), after
`tcdist warm-up` and compiling nothing more."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import checkout_environment

REPO = Path(__file__).parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```(bash|python)\n(.*?)^```", re.S | re.M)


def blocks():
    for page in PAGES:
        text = page.read_text()
        for found in BLOCK.finditer(text):
            line = text.count("\n", 0, found.start()) + 1
            yield pytest.param(found.group(1), found.group(2), id=f"{page.relative_to(REPO)}:{line}")


def environment(cache: Path):
    """tcdist of this checkout, its command on PATH (the interpreter's own bin folder), its compiled
    code kept in cache."""
    return checkout_environment(cache, {"PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]})


def compiled_files(cache: Path) -> set:
    return {str(p.relative_to(cache)) for p in cache.rglob("*") if p.suffix in (".nbi", ".nbc")}


@pytest.mark.parametrize("language,code", list(blocks()))
def test_every_example_runs_and_compiles_nothing_after_warm_up(tmp_path, warmed_cache, language, code):
    command = ["bash", "-euo", "pipefail", "-c", code] if language == "bash" else [sys.executable, "-c", code]
    before = compiled_files(warmed_cache)
    done = subprocess.run(command, cwd=tmp_path, env=environment(warmed_cache), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, f"{code}\n--- stdout\n{done.stdout[-2000:]}\n--- stderr\n{done.stderr[-2000:]}"
    assert compiled_files(warmed_cache) - before == set(), "compiled after tcdist warm-up"


def test_the_site_builds_without_warnings(tmp_path):
    pytest.importorskip("mkdocs")  # in the test extra: CI always has it
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "index.html").exists()
