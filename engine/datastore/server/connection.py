"""Connections to a PostgreSQL server datastore, and one clear message for every way they fail.

The driver (psycopg 3) is optional: Quire's local search needs none, so it is imported only when a
server datastore is used, and its absence says what to install.

A password is never remembered in the connection string Quire saves: it goes into a libpq
password file (``.pgpass`` format, mode 0600, in Quire's data folder) that libpq itself reads
through the ``passfile`` parameter. A connection string without a password leaves libpq to its
usual sources (``~/.pgpass``, ``PGPASSFILE``, ``PGPASSWORD``, a client certificate).
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from engine.errors import DatastoreUnavailableError, EngineError

log = logging.getLogger(__name__)

INSTALL_HINT = 'pip install "quire[server]" (it adds the PostgreSQL driver psycopg)'
# Seconds to wait for a server to answer a connection, and the default limit of one search query:
# a lab server that does not answer within them is left out of that search, the library still answers.
CONNECT_TIMEOUT_S = 5
STATEMENT_TIMEOUT_S = 5.0


def driver() -> ModuleType:
    """The psycopg module, or an error that says how to install it."""
    try:
        import psycopg
    except ImportError:
        raise EngineError(f"Server datastores need the PostgreSQL driver, which is not installed: {INSTALL_HINT}."
                          ) from None
    return psycopg


# A password in a key=value or URL connection string, and how much of a bad string an error message echoes.
_PASSWORD = re.compile(r"(password\s*=\s*)\S+|(://[^:/@\s]*:)[^@\s]*(?=@)", re.IGNORECASE)
_ECHOED_CHARS = 120


def _echoed(text: str) -> str:
    """A bad connection string (or the driver's words on it) as an error message shows it: any password
    masked, cut to a line."""
    masked = _PASSWORD.sub(lambda m: f"{m.group(1) or m.group(2)}***", text)
    return masked if len(masked) <= _ECHOED_CHARS else masked[:_ECHOED_CHARS] + "…"


def split_password(conninfo: str) -> tuple[str, dict[str, str], str | None]:
    """``conninfo`` (URL or key=value) without its password, its parameters, and the password if it held one."""
    psycopg = driver()
    try:
        params = psycopg.conninfo.conninfo_to_dict(conninfo)
    except psycopg.ProgrammingError as exc:
        raise EngineError(f"{_echoed(conninfo)!r} is not a PostgreSQL connection string ({_echoed(str(exc).strip())}); "
                          "write it as "
                          "postgresql://USER@HOST:PORT/DATABASE?sslmode=require") from None
    password = params.pop("password", None)
    clean = {key: str(value) for key, value in params.items()}
    return psycopg.conninfo.make_conninfo(**clean), clean, (str(password) if password is not None else None)


def shown(conninfo: str) -> str:
    """A connection string as the user may see it: user@host:port/database, never a password."""
    try:
        _, params, _ = split_password(conninfo)
    except EngineError:  # no driver installed (or not a connection string): read a URL by hand
        url = urlsplit(conninfo)
        params = {"user": url.username or "", "host": url.hostname or "localhost",
                  "port": str(url.port or ""), "dbname": url.path.lstrip("/")}
    user = params.get("user", "")
    host = params.get("host", "localhost")
    port = f":{params['port']}" if params.get("port") else ""
    return f"postgresql://{user + '@' if user else ''}{host}{port}/{params.get('dbname', '')}"


def save_password(passfile: Path, params: dict[str, str], password: str) -> None:
    """Write (or replace) the password of this host, port, database and user into ``passfile`` (mode 0600)."""
    key = [_pgpass_field(params.get(name, default)) for name, default in
           (("host", "localhost"), ("port", "5432"), ("dbname", "*"), ("user", "*"))]
    prefix = ":".join(key) + ":"
    kept = []
    if passfile.is_file():
        kept = [line for line in passfile.read_text(encoding="utf-8").splitlines() if not line.startswith(prefix)]
    passfile.parent.mkdir(parents=True, exist_ok=True)
    partial = passfile.with_name(passfile.name + ".part")
    # Created 0600 from the start: libpq ignores a password file others may read, and so should we.
    handle = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write("\n".join([*kept, prefix + _pgpass_field(password)]) + "\n")
    os.replace(partial, passfile)


def _pgpass_field(value: str) -> str:
    return value.replace("\\", "\\\\").replace(":", "\\:")


def connect(name: str, conninfo: str, passfile: Path | None, *,
            statement_timeout_s: float | None = STATEMENT_TIMEOUT_S, read_only: bool = True) -> Any:
    """An autocommit connection to datastore ``name``'s server; :class:`DatastoreUnavailableError` if it fails.

    ``statement_timeout_s`` None: no limit (publishing builds indexes for minutes).
    """
    psycopg = driver()
    limit_ms = 0 if statement_timeout_s is None else max(1, int(statement_timeout_s * 1000))
    options = f"-c statement_timeout={limit_ms}"
    if read_only:
        options += " -c default_transaction_read_only=on"
    extra: dict[str, Any] = {"connect_timeout": CONNECT_TIMEOUT_S, "application_name": "quire", "options": options}
    if passfile is not None and passfile.is_file():
        extra["passfile"] = str(passfile)
    try:
        return psycopg.connect(conninfo, autocommit=True, **extra)
    except psycopg.Error as exc:
        raise unavailable(name, conninfo, exc, statement_timeout_s or 0.0) from None


def unavailable(name: str, conninfo: str, exc: BaseException, statement_timeout_s: float = STATEMENT_TIMEOUT_S
                ) -> DatastoreUnavailableError:
    """The failure of a server datastore as one message that names it and says what to do."""
    why = _why(exc, statement_timeout_s)
    return DatastoreUnavailableError(f"the server datastore {name!r} ({shown(conninfo)}) {why}")


def _why(exc: BaseException, statement_timeout_s: float) -> str:
    psycopg = driver()
    errors = psycopg.errors
    text = " ".join(str(exc).split()) or type(exc).__name__
    lowered = text.lower()
    if isinstance(exc, errors.QueryCanceled):
        return (f"took longer than its limit of {statement_timeout_s:g} s for one query and was stopped; the "
                "server is busy or its indexes are missing (`quire datastore connect NAME URL --timeout S` "
                "allows more).")
    if isinstance(exc, errors.UndefinedTable | errors.UndefinedColumn | errors.InvalidSchemaName):
        return (f"does not hold Quire's tables any more ({text}); they were dropped or renamed. Publish the "
                "datastore to the server again (`quire datastore publish`).")
    if isinstance(exc, errors.InsufficientPrivilege):
        return (f"refuses to let this role read the datastore ({text}); ask the server's administrator to "
                "grant it SELECT (`quire datastore publish ... --reader ROLE` does).")
    if isinstance(exc, errors.UndefinedFunction | errors.UndefinedObject) and "vector" in lowered:
        return ("has no pgvector extension; ask the server's administrator to run CREATE EXTENSION vector in "
                "that database.")
    if "password authentication failed" in lowered or "no password supplied" in lowered:
        return ("refused the password (it was changed or revoked); connect again with the right one: "
                "`quire datastore connect NAME postgresql://USER:PASSWORD@HOST/DB`.")
    if isinstance(exc, errors.AdminShutdown | errors.CrashShutdown) or "terminat" in lowered or "closed" in lowered:
        return ("closed the connection (the server was stopped or restarted); Quire connects again at the "
                "next search.")
    if isinstance(exc, psycopg.OperationalError):
        return f"cannot be reached ({text}); check that the server is running and reachable from this computer."
    return f"failed ({text})."
