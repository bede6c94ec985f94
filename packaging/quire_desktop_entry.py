"""Entry script of the frozen bundle (PyInstaller runs this, not ``desktop/__main__.py``).

One executable is both commands: started as ``quire`` (the bundle's ``quire`` link, or
``/usr/bin/quire`` in the Debian package) it runs the command line, under any other name the
desktop app. Two executables would each carry their own copy of the start-up archive.

Ingestion parses each PDF in a worker process, started with multiprocessing's ``spawn`` method
when frozen (see ``engine/ingest/worker.py``). A spawned worker is a fresh copy of this very
executable with ``--multiprocessing-fork`` (or, for the resource tracker, ``-c ...``) arguments;
``multiprocessing.freeze_support()`` must see those first and run the worker instead of the app,
which would otherwise reject the arguments and exit 2. PyInstaller's multiprocessing run-time hook
makes ``freeze_support()`` do that on every platform, not only on Windows.
"""

import multiprocessing
import os
import sys

CLI_NAME = "quire"

if __name__ == "__main__":
    multiprocessing.freeze_support()
    if os.path.basename(sys.argv[0]) == CLI_NAME:
        from engine.cli.main import run
    else:
        from desktop.app import run

    run()
