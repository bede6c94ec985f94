"""The `quire` command line, on top of the Engine facade."""
