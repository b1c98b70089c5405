"""Python runs this at start-up when tests/hooks is on PYTHONPATH, as the killed-build tests set
it for the processes they start: with TOPICMAP_TEST_PAUSE_AT=<file name>, the pipeline's
atomic write of that file stops half-way through its temporary file, writes the temporary
file's path to TOPICMAP_TEST_PAUSED and waits, so the test can kill the process at the worst
moment. Nothing changes without the variable."""

import os

if os.environ.get("TOPICMAP_TEST_PAUSE_AT"):
    import time
    from pathlib import Path

    from pipeline import tables

    _atomic_write = tables.atomic_write

    def _paused_atomic_write(path, write):
        if Path(path).name != os.environ["TOPICMAP_TEST_PAUSE_AT"]:
            return _atomic_write(path, write)

        def half_written(target):
            write(target)
            with open(target, "r+b") as handle:  # cut it short: a write still under way
                handle.truncate(os.path.getsize(target) // 2)
            Path(os.environ["TOPICMAP_TEST_PAUSED"]).write_text(str(target), encoding="utf-8")
            time.sleep(600)

        return _atomic_write(path, half_written)

    tables.atomic_write = _paused_atomic_write
