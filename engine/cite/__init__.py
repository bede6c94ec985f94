"""Citations the engine checks rather than trusts: markers, sentence splitting, support, verification."""
