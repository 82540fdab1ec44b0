"""Inspector speed and memory on a large synthetic session, headless.

    python benchmarks/bench_tui.py [N_MESSAGES] [--format ctxview|claude-code|...]

Writes a session of N messages (default 100,000) with benchmarks/make_session.py,
then runs the app headless (`App.run_test`) and prints:

- first screen: from creating the app to the first frame with both sides (opened with the default
  tiers, a what-if; `--tiers sent` opens the app's default view, each request as sent),
  loading included (and to the last frame before the app idles: the #sys row's fitted note
  and anything else that followed) (target ≤ 1.5 s at 100k messages, 6 s at 500k); also when the stored side alone is first on
  screen: its first messages while a big file is still read (a ctxview file, read in pieces), and all of them
  (they show while the first pipeline run computes the prepared side);
- keep_recent change: from the key press to the last frame written with the
  recomputed view (target ≤ 50 ms at 100k messages, 100 ms at 500k), several
  presses; the pipeline's own recompute is part of it (a keep_recent step
  updates the layout's rows it changed, see tui/layout.py);
- scroll to end: from the End key to the frame showing the last message
  (target ≤ 100 ms);
- tier preset change: `t` to a preset the pipeline has not run yet, from the
  key press to the last frame of the recomputed view (the "recompute
  after one setting changes", as a user sees it);

- (--keys) keys while opening: from the first stored messages on screen to the first full screen, `down`
  every 0.3 s, each from the key press to the frame showing the cursor moved (the screen answers keys
  while the file is read and the first view computes); the first-screen figures then include
  that work.

With --before ROOT (a checkout of the release before) only the opening is measured, in a fresh
process for each checkout, taken in turns --runs times; both checkouts are compiled first, so
that neither pays for compiling the modules it imports while it opens.

Times end at the last frame the app writes (App._display), not when the test
pilot notices the app is idle (which adds its own 20 ms polling).
- memory: resident-set growth from before loading to after the first screen and
  the process's peak, against the file size (target ≤ 3×). The session file is
  written by a separate process, so this one starts as fresh as a user's.
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the checkout measured: this one, or (--before) the release before's, in a process of its own
TREE = Path(os.environ.get("CTXVIEW_BENCH_TREE", ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(TREE))
os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")


def rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


async def wait_applied(app, pilot, timeout: float = 60.0) -> None:
    """Until the newest recompute is on screen."""
    deadline = time.perf_counter() + timeout
    while True:
        await pilot.pause()
        if not app.busy and app.error is None:
            await pilot.pause()  # let the compositor paint the new view
            return
        if app.error is not None:
            raise SystemExit(f"app failed: {app.error}")
        if time.perf_counter() > deadline:
            raise SystemExit("timed out waiting for the view")
        await asyncio.sleep(0.001)


async def keys_while_opening(app, pilot, every: float = 0.3) -> list[float]:
    """`down` every `every` seconds from the first rows on screen until the first full screen: each
    the time from the key press to the first frame with the cursor moved."""
    latencies = []
    while app.busy and app.error is None:
        layout = app.row_layout
        if layout is None or app.cursor >= len(layout) - 1:
            await asyncio.sleep(0.02)
            continue
        want, t = app.cursor + 1, time.perf_counter()
        await pilot.press("down")
        while app.error is None:
            frames = [p for p, c in zip(app.paints, app.cursors) if p >= t and c == want]
            if frames:
                latencies.append(frames[0] - t)
                break
            if app.cursor != want:
                break  # (the layout changed under it)
            await asyncio.sleep(0.002)
        await asyncio.sleep(every)
    return latencies


async def run(path: Path, presses: int, keys: bool = False, tiers: str = "default", opening_only: bool = False) -> dict:
    from ctxview.tui.app import CtxviewApp
    from ctxview.engine.view import Settings

    class TimedApp(CtxviewApp):
        """Records when each frame is written: "repainted" means the frame is out."""

        paints: list[float] = []
        stored_shown: float | None = None
        first_read_shown: float | None = None
        loaded_rss: int | None = None

        def _show_read_so_far(self, *args):
            if TimedApp.first_read_shown is None:
                TimedApp.first_read_shown = time.perf_counter()
            return super()._show_read_so_far(*args)

        first_full: float | None = None   # the first frame written with a view (both sides)

        def _show_stored(self, *args):
            TimedApp.stored_shown = time.perf_counter()
            TimedApp.loaded_rss = rss_bytes()  # the session loaded, the first pipeline run not started
            return super()._show_stored(*args)

        def _display(self, screen, renderable) -> None:
            super()._display(screen, renderable)
            if renderable is not None:
                self.paints.append(time.perf_counter())
                if TimedApp.first_full is None and self.view is not None:
                    TimedApp.first_full = self.paints[-1]
                self.cursors.append(self.cursor if self.row_layout is not None else None)

        cursors: list[int | None] = []

    def repainted_after_first(t: float, app) -> float:
        after = [p for p in app.paints if p >= t]
        return after[0] if after else float("nan")

    def repainted_after(t: float, app) -> float:
        after = [p for p in app.paints if p >= t]
        return (after[-1] - t) if after else float("nan")

    gc.collect()
    rss_before = rss_bytes()
    t0 = time.perf_counter()
    c0 = time.process_time()
    # ("sent": the app's default view, each request as sent; a preset: that what-if from the start, so
    # that the keep_recent and tier presses below have tool results to cut)
    app = TimedApp(str(path), Settings() if tiers == "sent" else Settings(tiers=tiers))
    figures: dict = {}
    async with app.run_test(size=(160, 45)) as pilot:
        if keys:
            figures["keys_while_opening"] = await keys_while_opening(app, pilot)
        await wait_applied(app, pilot, timeout=600.0)  # (500k messages on a busy box: minutes)
        figures["first_screen"] = app.paints[-1] - t0
        if TimedApp.first_full is not None:
            figures["first_full"] = TimedApp.first_full - t0
        figures["first_screen_cpu"] = time.process_time() - c0
        if TimedApp.first_read_shown is not None:
            figures["first_read"] = repainted_after_first(TimedApp.first_read_shown, app) - t0
        if TimedApp.stored_shown is not None:
            figures["stored_side"] = repainted_after_first(TimedApp.stored_shown, app) - t0
        figures["rows"] = len(app.view.rows)
        if opening_only:
            return figures
        gc.collect()
        figures["rss_growth"] = rss_bytes() - rss_before

        # Up `presses` times (each a keep_recent the pipeline has not seen), then
        # back down over the values it has.
        for label, key in (("keep_recent_new", "plus"), ("keep_recent_seen", "minus")):
            times = []
            for _ in range(presses):
                t = time.perf_counter()
                await pilot.press(key)
                await wait_applied(app, pilot)
                await pilot.pause()
                times.append(repainted_after(t, app))
            figures[label] = times

        scroll = []
        for key in ("end", "home", "end"):
            t = time.perf_counter()
            await pilot.press(key)
            await pilot.pause()
            scroll.append((key, repainted_after(t, app)))
        pane = app.stored_pane
        figures["at_end"] = pane.scroll_y == pane.max_scroll_y and app.cursor == len(app.row_layout) - 1
        figures["scroll"] = scroll
        figures["lines"] = app.row_layout.total_lines
        figures["peak_rss"] = peak_rss_bytes()  # before the tier presets below fill more caches

        # `t` through the tier presets the pipeline has not run yet: every tool result is cut anew.
        tiers = []
        for _ in range(2):
            t = time.perf_counter()
            await pilot.press("t")
            await wait_applied(app, pilot)
            await pilot.pause()
            tiers.append((app.settings.tiers, repainted_after(t, app)))
        figures["tiers"] = tiers
    figures["rss_before"] = rss_before
    if TimedApp.loaded_rss is not None:
        figures["loaded_growth"] = TimedApp.loaded_rss - rss_before
    return figures


# Run on a written ctxview session (in its own process, as the writing is).
_UNIQUE_CONTENTS = """
import sys, orjson
path = sys.argv[1]
doc = orjson.loads(open(path, "rb").read())
for conv in doc["conversations"]:
    for i, m in enumerate(conv["messages"]):
        if isinstance(m.get("content"), str):
            m["content"] = f"[{i}] " + m["content"]
open(path, "wb").write(orjson.dumps(doc))
"""


OPENING = ("stored_side", "first_full", "first_screen", "first_screen_cpu")


def in_turns(path: Path, tiers: str, before: Path, runs: int) -> int:
    """The opening of `path` with this checkout and `before`, in turns, each in a process of its own."""
    trees = [("this tree", ROOT), ("release before", before)]
    for _, tree in trees:
        compileall.compile_dir(str(tree / "ctxview"), quiet=1)
    for k in range(runs):
        for label, tree in trees:
            out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--measure-opening", str(path),
                                  "--tiers", tiers], capture_output=True, text=True,
                                 env={**os.environ, "CTXVIEW_BENCH_TREE": str(tree)})
            if out.returncode:
                print(f"run {k + 1}, {label}: failed: {out.stderr.strip().splitlines()[-1:]}")
                continue
            f = json.loads(out.stdout.strip().splitlines()[-1])
            stored = f"stored side {f['stored_side'] * 1000:.0f} ms, " if f.get("stored_side") else ""
            print(f"run {k + 1}, {label:14}: {stored}first frame with both sides {f['first_full'] * 1000:.0f} ms "
                  f"(target 1500 ms at 100k messages), settled {f['first_screen'] * 1000:.0f} ms, process CPU "
                  f"{f['first_screen_cpu'] * 1000:.0f} ms")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("n", nargs="?", type=int, default=100_000)
    parser.add_argument("--format", default="ctxview")
    parser.add_argument("--presses", type=int, default=4)
    parser.add_argument("--keys", action="store_true", help="press keys while the screen opens (their latency)")
    parser.add_argument("--keep", help="write the session here and keep it")
    parser.add_argument("--tiers", default="default",
                        help="the tier preset the app opens with (a what-if; default: default), or `sent`: "
                             "the app's own default view, each request as sent")
    parser.add_argument("--before", metavar="ROOT",
                        help="also open the file with this checkout (the release before), in turns: the opening's "
                             "figures of each, each run in a process of its own")
    parser.add_argument("--runs", type=int, default=3, help="with --before: how many turns")
    parser.add_argument("--measure-opening", metavar="FILE", help=argparse.SUPPRESS)
    parser.add_argument("--unique-contents", action="store_true",
                        help="(ctxview) prefix every message's content with its index, so that no content repeats: "
                             "the memory figures without the loader's sharing of repeated strings")
    args = parser.parse_args(argv)
    if args.measure_opening:
        figures = asyncio.run(run(Path(args.measure_opening), 0, False, args.tiers, opening_only=True))
        print(json.dumps({k: figures.get(k) for k in OPENING}))
        return 0

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.keep) if args.keep else Path(tmp) / f"bench-{args.n}.{args.format}.json"
        if not path.exists():
            # In a process of its own: generating the session here would leave this process's heap
            # grown, and the app would fill that instead of growing (the memory figures would flatter).
            t = time.perf_counter()
            subprocess.run([sys.executable, str(ROOT / "benchmarks" / "make_session.py"), str(args.n),
                            "--format", args.format, "-o", str(path)], check=True, stdout=subprocess.DEVNULL)
            if args.unique_contents:
                subprocess.run([sys.executable, "-c", _UNIQUE_CONTENTS, str(path)], check=True)
            print(f"wrote {path.name}: {args.n:,} messages in {time.perf_counter() - t:.1f} s")
        size = path.stat().st_size
        if args.before:
            return in_turns(path, args.tiers, Path(args.before), args.runs)
        figures = asyncio.run(run(path, args.presses, args.keys, args.tiers))

    mb = 1024 * 1024
    # the targets: the first full screen within 1.5 s at 100k messages (quiet box), 6 s at 500k;
    # the keep_recent repaint within 50 ms at 100k, 100 ms at 500k
    screen_target, repaint_target = (1500, 50) if figures["rows"] <= 100_000 else (6000, 100)
    unique = ", every content unique" if args.unique_contents else ""
    print(f"file: {size / mb:.1f} MB ({args.format}{unique}), {figures['rows']:,} rows, {figures['lines']:,} pane lines; "
          f"opened {'as sent' if args.tiers == 'sent' else 'with the ' + args.tiers + ' tiers (a what-if)'}")
    if "first_read" in figures:
        print(f"stored side's first messages on screen (the file still being read): {figures['first_read'] * 1000:.0f} ms")
    if "stored_side" in figures:
        print(f"stored side on screen (loading included): {figures['stored_side'] * 1000:.0f} ms")
    if "first_full" in figures:
        print(f"first frame with both sides (loading included): {figures['first_full'] * 1000:.0f} ms"
              f"   target ≤ {screen_target} ms")
    print(f"first screen with both sides, settled (the last frame before the app idles; loading included): "
          f"{figures['first_screen'] * 1000:.0f} ms"
          f" (process CPU {figures['first_screen_cpu'] * 1000:.0f} ms; wall time grows when the box is busy)")
    if "keys_while_opening" in figures:
        lat = figures["keys_while_opening"]
        if lat:
            print(f"keys while opening (down, to the frame with the cursor moved): {len(lat)} presses, "
                  f"median {statistics.median(lat) * 1000:.0f} ms, max {max(lat) * 1000:.0f} ms")
        else:
            print("keys while opening: none answered (no rows on screen before the first full screen)")
    for label, what in (("keep_recent_new", "to a value not computed yet"),
                        ("keep_recent_seen", "back to a value computed before")):
        kr = figures[label]
        print(f"keep_recent change {what}, repainted: median {statistics.median(kr) * 1000:.0f} ms, "
              f"max {max(kr) * 1000:.0f} ms over {len(kr)} presses   target ≤ {repaint_target} ms")
    for key, t in figures["scroll"]:
        print(f"scroll {key}: {t * 1000:.0f} ms   target ≤ 100 ms")
    print(f"at the end after End: {figures['at_end']}")
    for preset, t in figures["tiers"]:
        print(f"tier preset changed to {preset} (first time), repainted: {t * 1000:.0f} ms")
    growth = figures["rss_growth"]
    peak = figures["peak_rss"] - figures["rss_before"]
    print(f"memory: resident growth {growth / mb:.0f} MB = {growth / size:.2f}× file; "
          f"peak growth {peak / mb:.0f} MB = {peak / size:.2f}× file   target ≤ 3×")
    if "loaded_growth" in figures:
        loaded = figures["loaded_growth"]
        print(f"memory with the session loaded, before the first pipeline run: resident growth {loaded / mb:.0f} MB"
              f" = {loaded / size:.2f}× file")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
