"""The CUDA driver started on a thread when a count begins, while Python imports the rest of
tcdist and reads the input: CuPy imported, the driver started and, for a process that counts on
the first GPU, that GPU's context made (0.1-0.2 s of a GPU count of a few seconds). Nothing here
fails a run: device.resolve() finds and says any problem, and waits for this start first."""

import threading

_started: threading.Thread | None = None


def start(first_gpu: bool) -> None:
    """Begin the CUDA start (first_gpu: make the first GPU's context too)."""
    global _started

    def run():
        try:
            import cupy

            if cupy.cuda.runtime.getDeviceCount() and first_gpu:
                cupy.cuda.runtime.free(0)  # the first GPU is this thread's current one: its context made
        except Exception:  # no CuPy, no driver, no GPU: resolve() says so, or counts on the CPU
            pass

    _started = threading.Thread(target=run, name="tcdist-cuda-start", daemon=True)
    _started.start()


def wait() -> None:
    """Wait for a start begun here (no CUDA call runs beside it)."""
    if _started is not None:
        _started.join()
