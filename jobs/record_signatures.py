"""Record the CPU warm-up's list (tcdist/data/signatures.txt): every compiled function's signatures,
in the order a count of a text file first needs them, then the rest. Run it after changing a
compiled function or what a command calls it with; tests/test_docs.py fails while the list misses one.

    python jobs/record_signatures.py
"""

from tcdist.cli import main
from tcdist.warm import record

if __name__ == "__main__":
    record(main)
