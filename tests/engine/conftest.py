"""Fixtures of the engine tests: a real PostgreSQL server per module that asks for one."""

from fixtures.pg_server import pg_server

__all__ = ["pg_server"]
