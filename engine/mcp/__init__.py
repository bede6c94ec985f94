"""`quire mcp`: the library as a Model Context Protocol server (stdio or loopback HTTP), on the Engine facade."""
