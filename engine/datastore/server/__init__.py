"""Server datastores: a lab's corpus held once in PostgreSQL + pgvector, searched beside the library.

``publish.py`` loads an installed datastore into a server (schema created and versioned here,
``schema.py``); ``source.py`` searches it as a :class:`~engine.retrieve.source.PassageSource`
(BM25 computed by the server over stems Quire wrote, dense search by pgvector's HNSW);
``connection.py`` opens connections (password in a libpq password file, never in settings) and turns
every failure into one message that names the datastore; ``servers.py`` remembers which servers are
connected. The PostgreSQL driver (psycopg) is optional: without it local search is unchanged and
connecting says what to install.
"""

from __future__ import annotations
