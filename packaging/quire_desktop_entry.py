"""Entry script of the frozen ``quire-desktop`` bundle (PyInstaller runs this, not ``desktop/__main__.py``).

Ingestion parses each PDF in a worker process, started with multiprocessing's ``spawn`` method
when frozen (see ``engine/ingest/worker.py``). A spawned worker is a fresh copy of this very
executable with ``--multiprocessing-fork`` (or, for the resource tracker, ``-c ...``) arguments;
``multiprocessing.freeze_support()`` must see those first and run the worker instead of the app,
which would otherwise reject the arguments and exit 2. PyInstaller's multiprocessing run-time hook
makes ``freeze_support()`` do that on every platform, not only on Windows.
"""

import multiprocessing

if __name__ == "__main__":
    multiprocessing.freeze_support()
    from desktop.app import run

    run()
