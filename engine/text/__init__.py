"""Plain-text helpers shared by ingest, search and citation checking.

One module per concern, one list per concern: tokens (what a word is), stem (the one stemmer,
the same Porter algorithm as the FTS5 index), stopwords (the one English stop list and its named
parts), abbreviations, sentences, titles (the words title case leaves lower-case) and characters
(ASCII folding for matching, text made safe to encode); and two tests of a sentence that is no
quote: furniture (a repository's page stamp) and addressed (an instruction planted for a model
reading the paper). Nothing here knows about passages, papers or citations; callers pass what they
need (such as the pattern of a citation marker) in.
"""
