"""Thread workers on daemon threads, so that quitting never waits for one.

Textual runs `@work(thread=True)` jobs on the event loop's default executor,
and both asyncio.run and the interpreter's exit join that executor's
threads: `q` during the load of a big or slow file would leave the process
waiting until the load ends. The app installs `DaemonThreads` as
the loop's default executor instead: each job gets a daemon thread of its
own, shutting it down waits for nothing, and a job still running at exit is
dropped with the process. Workers post their results as messages; after
the app has closed, those go nowhere.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

__all__ = ["DaemonThreads"]


class DaemonThreads(ThreadPoolExecutor):
    """A ThreadPoolExecutor (asyncio accepts no other kind) that runs each job on a new daemon thread."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        future: Future = Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - handed to whoever awaits the job
                future.set_exception(exc)
            else:
                future.set_result(result)

        threading.Thread(target=run, name="ctxview-worker", daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Waits for nothing: a job in flight ends with the process."""
