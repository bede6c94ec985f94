"""Evidence-first synthesis: retrieve -> extract quotes -> plan themes -> write (or digest) -> verify."""
