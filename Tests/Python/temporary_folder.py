"""Temporary folders for the Python test drivers and benchmarks: each is removed when its block
ends, however it ends (a failed check, an exception, sys.exit, Ctrl-C), as the Swift tests'
withTemporaryFolder does. `scripts/test` fails when a `pianola-*` folder is left behind.

    with temporary_folder("compare") as work:
        ...

With PIANOLA_KEEP_TEST_FILES=1 set the folder is kept, for a look after a failure, and its path
is printed."""
import contextlib
import os
import shutil
import sys
import tempfile


@contextlib.contextmanager
def temporary_folder(name):
    """A new folder `pianola-NAME-XXXXXXXX` in the system's temporary directory ($TMPDIR, else /tmp)."""
    path = tempfile.mkdtemp(prefix=f"pianola-{name}-")
    try:
        yield path
    finally:
        if os.environ.get("PIANOLA_KEEP_TEST_FILES"):
            print(f"kept {path} (PIANOLA_KEEP_TEST_FILES)", file=sys.stderr)
        else:
            shutil.rmtree(path, ignore_errors=True)
