"""What the Engine does with server datastores: publish one to PostgreSQL, connect to one, describe them.

Publishing reads an installed datastore (or a pack file, unpacked into a temporary folder first)
and writes it to the server (``server/publish.py``). Connecting checks that the server answers
and holds a datastore this Quire can read before remembering it; the password goes to the libpq
password file, never to ``servers.json`` or ``settings.toml``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from engine.datastore.manage import DatastoreInfo
from engine.datastore.pack import install_pack, read_pack_manifest
from engine.datastore.registry import DatastoreRegistry, check_name
from engine.datastore.server.connection import STATEMENT_TIMEOUT_S, connect, save_password, shown, split_password
from engine.datastore.server.publish import PublishReport, publish
from engine.datastore.server.schema import check_schema_name, read_meta, schema_problem
from engine.datastore.server.servers import ServerEntry, ServerList
from engine.datastore.source import DatastoreSource
from engine.embed import Embedder
from engine.errors import DatastoreUnavailableError, EngineError
from engine.progress import CancelToken, ProgressCallback, no_progress


def publish_to_server(registry: DatastoreRegistry, what: str, url: str, *, schema: str = "quire",
                      reader: str | None = None, replace: bool = False, progress: ProgressCallback = no_progress,
                      cancel: CancelToken | None = None) -> PublishReport:
    """Publish the installed datastore ``what`` (or the pack file ``what``) to the server at ``url``."""
    check_schema_name(schema)
    conn = connect(what, url, None, statement_timeout_s=None, read_only=False)
    try:
        if _is_installed(registry, what):
            source = registry.source(what)
            return publish(source, conn, shown(url), schema=schema, reader=reader, replace=replace,
                           progress=progress, cancel=cancel)
        pack = Path(what).expanduser()
        if not pack.exists():
            raise EngineError(f"{what!r} is neither an installed datastore (`quire datastore list`) nor a pack file.")
        manifest = read_pack_manifest(pack)
        with tempfile.TemporaryDirectory(prefix="quire-publish-") as work:
            # The pack's own model is accepted: the vectors are copied, not compared with this Quire's embedder.
            install_pack(pack, Path(work), configured_model=lambda: manifest.embedding_model or "",
                         progress=progress, cancel=cancel)
            unpacked = DatastoreSource(manifest.name, Path(work) / manifest.name, _no_embedder)
            try:
                return publish(unpacked, conn, shown(url), schema=schema, reader=reader, replace=replace,
                               progress=progress, cancel=cancel)
            finally:
                unpacked.close()
    finally:
        conn.close()


def _is_installed(registry: DatastoreRegistry, what: str) -> bool:
    try:
        return registry.exists(what)
    except EngineError:  # not a datastore name at all: a pack file's path
        return False


def _no_embedder() -> Embedder:
    raise EngineError("publishing copies the datastore's vectors; it embeds nothing")


def connect_server(registry: DatastoreRegistry, name: str, url: str, *, schema: str = "quire",
                   statement_timeout_s: float = STATEMENT_TIMEOUT_S) -> DatastoreInfo:
    """Check that ``url`` holds a datastore this Quire can search, then remember it as ``name``."""
    check_name(name)
    check_schema_name(schema)
    if registry.exists(name):
        raise EngineError(f"A local datastore is already named {name!r}; choose another name for the server one.")
    if statement_timeout_s <= 0:
        raise EngineError("The query time limit must be a positive number of seconds.")
    conninfo, params, password = split_password(url)
    if password is not None:
        save_password(registry.servers.passfile, params, password)
    conn = connect(name, conninfo, registry.servers.passfile, statement_timeout_s=statement_timeout_s)
    try:
        problem = schema_problem(conn, schema)
        if problem:
            raise DatastoreUnavailableError(f"the server datastore {name!r} ({shown(conninfo)}) {problem}")
        meta = read_meta(conn, schema)
    finally:
        conn.close()
    registry.forget(name)
    registry.servers.add(ServerEntry(name, conninfo, schema, statement_timeout_s))
    return _info(name, conninfo, meta, "connected")


def server_infos(registry: DatastoreRegistry) -> list[DatastoreInfo]:
    """Each connected server datastore with what it holds, or why it cannot be searched now."""
    infos = []
    for name, entry in sorted(registry.servers.entries().items()):
        if registry.exists(name):
            continue
        try:
            meta = registry.server_source(name).describe()
        except EngineError as exc:
            infos.append(_info(name, entry.conninfo, {}, f"unavailable: {exc}"))
            continue
        infos.append(_info(name, entry.conninfo, meta, "connected"))
    return infos


def _info(name: str, conninfo: str, meta: dict[str, str], state: str) -> DatastoreInfo:
    def number(key: str) -> int:
        try:
            return int(meta.get(key, "0"))
        except ValueError:
            return 0

    model = meta.get("embedding_model") or None
    return DatastoreInfo(name=name, records=number("records"), passages=number("passages"),
                         words=number("total_length"), embedded=number("passages") if model else 0,
                         embedding_model=model, size_bytes=0, version=meta.get("version", ""),
                         created_at=meta.get("published_at", ""), imported_from=(), location=shown(conninfo),
                         state=state)


def server_problems(servers: ServerList) -> list[str]:
    """Connected server datastores that cannot be searched now, each with why."""
    from engine.datastore.server.source import ServerDatastoreSource

    problems = []
    for entry in servers.entries().values():
        source = ServerDatastoreSource(entry.name, entry.conninfo, servers.passfile, schema=entry.schema,
                                       statement_timeout_s=entry.statement_timeout_s)
        try:
            source.describe()
        except EngineError as exc:
            problems.append(f"{exc}; searches leave it out until it answers.")
        finally:
            source.close()
    return problems


def privacy_statement(servers: ServerList) -> str:
    """Where a question's text goes: nowhere, or to the connected servers and nowhere else."""
    entries = servers.entries()
    if not entries:
        return "offline: questions and papers stay on this computer"
    where = "; ".join(f"{name} at {shown(entry.conninfo)}" for name, entry in sorted(entries.items()))
    return (f"questions searched with datastores are sent to the server datastores ({where}) and nowhere else; "
            "your papers and the library stay on this computer")
