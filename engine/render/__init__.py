"""Answers as Markdown, HTML (for the UI, every piece of paper text escaped), BibTeX and JSON."""
