"""Plain-text helpers shared by ingest, search and citation checking.

One module per concern, one list per concern: tokens (what a word is), stem (the one stemmer,
the same Porter algorithm as the FTS5 index), stopwords, abbreviations and sentences; and two tests
of a sentence that is no quote: furniture (a repository's page stamp) and addressed (an instruction
planted for a model reading the paper). Nothing here
knows about passages, papers or citations; callers pass what they need (such as the pattern of a
citation marker) in.
"""
