import signal
import sys

# SIGINT/SIGTERM that come while the command line is imported are recorded, not raised
# (a KeyboardInterrupt traceback, or death by SIGTERM): main() acts on them
# (app.run_signals; docs/output.md, "Guarantees").
_EARLY: list[int] = []
_OLD = {s: signal.signal(s, lambda n, _f: _EARLY.append(n))
        for s in (signal.SIGINT, signal.SIGTERM)}

from app.cli import main  # noqa: E402

sys.exit(main(early=(_EARLY, _OLD)))
