"""Exports a reference manager accepts: BibTeX parsed back with a BibTeX parser (one entry per paper,
unique readable keys, real titles and years), Markdown bylines, file names from the question, and
datastore records whose title field had the abstract glued on."""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
from pathlib import Path

import pytest

from engine.bibliography import Bibliography
from engine.datastore.reader import Record, record_from_json
from engine.datastore.record_title import split_glued_title
from engine.render.bibtex import cite_key, to_bibtex, unique_keys
from engine.render.common import byline, page_list, reference_line
from engine.render.html import to_html
from engine.render.markdown import to_markdown
from engine.render.paper_table import to_csv
from engine.store.record import answer_from_dict, answer_to_dict
from engine.table_types import PaperRow, PaperTable, TableCell, TableColumn
from engine.types import Answer, AnswerMode, AnswerSentence, Citation, PaperReference, Reference

bibtexparser = pytest.importorskip("bibtexparser")
BUNDLED = Path(__file__).resolve().parents[2] / "resources" / "datastores" / "cs-sample.jsonl.gz"
SPECTER = "SPECTER: Document-level Representation Learning using Citation-informed Transformers"


def _ref(n: int, doc: str, title: str, authors: tuple[str, ...] = (), year: int | None = None, page: int | None = 1,
         source: str = "library", **extra: str) -> Reference:
    """A cited passage of paper ``n`` (passages of one paper share its ``n``), on ``page``; ``extra`` are
    the paper's other bibliographic fields (doi, url, ...)."""
    return Reference(n, f"{doc}-{page or 0:04d}", doc, source, Bibliography(title, authors, year, **extra),
                     f"Passage on page {page} of {title}.", page=page)


def answer_citing(*references: Reference) -> Answer:
    sentences = tuple(AnswerSentence(f"Claim {r.n} [{r.n}].",
                                     (Citation(r.n, r.passage_id, r.text, 0, len(r.text), 0.9),), True)
                      for r in references)
    return Answer(question="What do these papers say?", text=" ".join(s.text for s in sentences), sentences=sentences,
                  references=references, mode=AnswerMode.WRITTEN)


def test_bibtex_parses_with_one_entry_per_paper_and_unique_readable_keys() -> None:
    cohan = ("Arman Cohan", "Sergey Feldman", "Iz Beltagy", "Doug Downey", "Daniel S. Weld")
    answer = answer_citing(
        _ref(1, "specter", SPECTER, cohan, 2020, page=3, doi="10.18653/v1/2020.acl-main.207"),
        _ref(1, "specter", SPECTER, cohan, 2020, page=6, doi="10.18653/v1/2020.acl-main.207"),
        _ref(2, "rec1", "Document classification {with} 100% & $5 budgets", source="cs-sample",
             page=None, url="https://openreview.net/forum?id=abc_1"),
        _ref(3, "rec2", "Document clustering at scale", source="cs-sample", page=None),
        _ref(4, "lo", "The Semantic Scholar Open Research Corpus", ("Kyle Lo", "Lucy Lu Wang"), 2020),
    )
    parsed = bibtexparser.loads(to_bibtex(answer))
    keys = [entry["ID"] for entry in parsed.entries]
    assert len(parsed.entries) == 4  # SPECTER cited twice is one work
    assert len(set(keys)) == len(keys)
    assert keys[0] == "cohan2020specter" and keys[3] == "lo2020semantic"
    assert all(re.fullmatch(r"[a-z]+[0-9]*[a-z]+", key) for key in keys), keys
    specter = parsed.entries[0]
    # Capitals braced so styles keep them; a DOI with no journal known is no @article without a journal.
    assert specter["title"].replace("{", "").replace("}", "") == SPECTER
    assert specter["year"] == "2020" and specter["ENTRYTYPE"] == "misc"
    assert specter["author"].split(" and ")[0] == "Cohan, Arman" and specter["doi"].startswith("10.18653/")
    record = parsed.entries[1]
    assert re.sub(r"\\(.)", r"\1", record["title"]) == "Document classification with 100% & $5 budgets"
    assert record["url"] == "https://openreview.net/forum?id=abc_1"  # verbatim: an escaped URL is a broken link
    assert "year" not in record  # no invented years


def test_keys_stay_unique_when_many_papers_collide() -> None:
    papers = [_ref(n, f"d{n}", "Attention", ("A. Vaswani",), 2017) for n in range(1, 30)]
    keys = unique_keys([paper.bib for paper in papers])
    assert len(set(keys)) == 29 and keys[:3] == ["vaswani2017attention", "vaswani2017attentiona",
                                                 "vaswani2017attentionb"]
    assert cite_key(Bibliography("Über Gödel's theorem", ("Kurt Gödel",), 1931)) == "godel1931uber"
    assert cite_key(Bibliography()) == "anonpaper"


def test_markdown_bylines_never_double_the_full_stop() -> None:
    fader = _ref(1, "fader", "Open question answering over curated and extracted knowledge bases",
                 ("Anthony Fader", "Luke Zettlemoyer", "Oren Etzioni"), page=2)
    rendered = to_markdown(answer_citing(fader))
    assert "et al.." not in rendered and "Fader et al., *Open question" in rendered
    assert ".." not in reference_line(fader)
    assert byline(("Cohan, Arman", "Feldman, Sergey"), 2020) == "Cohan and Feldman 2020"
    assert page_list([6, 3, 7, 8, 3]) == "pp. 3, 6-8" and page_list([4]) == "p. 4" and page_list([]) == ""


def test_glued_titles_are_split_from_their_abstract() -> None:
    glued = ("document: V-Net: Fully Convolutional Neural Networks for Volumetric Medical Image Segmentation "
             "Convolutional Neural Networks (CNNs) have been recently employed to solve problems.")
    title, abstract = split_glued_title(glued)
    assert title == "V-Net: Fully Convolutional Neural Networks for Volumetric Medical Image Segmentation"
    assert abstract.startswith("Convolutional Neural Networks (CNNs) have been")
    assert split_glued_title("Attention Is All You Need")[1] == ""
    chess = split_glued_title("document: Mastering Chess and Shogi by Self-Play with a General Reinforcement "
                              "Learning Algorithm The game of chess is the most studied domain.")
    assert chess[0].endswith("Algorithm") and chess[1].startswith("The game")
    record = record_from_json(1, {"id": "x", "title": glued, "text": "Introduction Body."})
    assert isinstance(record, Record) and record.bib.title.endswith("Segmentation")
    assert record.text.startswith("Convolutional Neural Networks (CNNs)") and record.text.endswith("Body.")


def test_the_bundled_sample_datastore_has_no_abstract_for_a_title() -> None:
    titles = []
    with gzip.open(BUNDLED, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            record = record_from_json(number, json.loads(line))
            assert isinstance(record, Record)
            titles.append(record.bib.title)
    assert not [t for t in titles if t.lower().startswith("document:")]
    too_long = [t for t in titles if len(t.split()) > 30]
    assert not too_long, too_long[:3]


def per_paper_answer() -> Answer:
    """SPECTER cited on pages 3 and 6 by two sentences, S2ORC once; one sentence only partly supported,
    one contradicted, as the verifier marks them."""
    cohan = ("Arman Cohan", "Sergey Feldman", "Iz Beltagy")
    p3, p6 = _ref(1, "specter", SPECTER, cohan, 2020, page=3), _ref(1, "specter", SPECTER, cohan, 2020, page=6)
    s2orc = _ref(2, "s2orc", "S2ORC: The Semantic Scholar Open Research Corpus", ("Kyle Lo", "Lucy Lu Wang"), 2020,
                 page=2)
    papers = (PaperReference(1, "specter", "library", Bibliography(SPECTER, authors=cohan, year=2020), pages=(3, 6),
                             passage_ids=(p3.passage_id, p6.passage_id)),
              PaperReference(2, "s2orc", "library", Bibliography(s2orc.bib.title, authors=s2orc.bib.authors, year=2020),
                             pages=(2,), passage_ids=(s2orc.passage_id,)))

    def cite(ref: Reference) -> Citation:
        return Citation(ref.n, ref.passage_id, ref.text, 0, len(ref.text), 0.9)
    sentences = (AnswerSentence("SPECTER uses citations [1].", (cite(p3),), True, support="supported"),
                 AnswerSentence("It beats every model [1].", (cite(p6),), True, support="partial"),
                 AnswerSentence("S2ORC is tiny [2].", (cite(s2orc),), False, support="contradicted"))
    return Answer("What is SPECTER?", " ".join(s.text for s in sentences), sentences, (p3, p6, s2orc),
                  AnswerMode.WRITTEN, papers=papers, id="x1", created_at=2.0)


def test_references_are_grouped_by_paper_in_markdown_html_bibtex_and_json() -> None:
    answer = per_paper_answer()
    markdown = to_markdown(answer)
    references = markdown.split("## References", 1)[1]
    entries = [line for line in references.splitlines() if line.startswith("- ")]
    assert len(entries) == 2 and entries[0].startswith("- \\[1\\] Cohan et al. 2020, *SPECTER")
    assert "pp. 3, 6" in references and references.count("  > “Passage on page") == 3  # both SPECTER quotes kept
    assert "(p. 6)" in references
    assert "It beats every model \\[1\\]. *(partly supported)*" in markdown
    assert "S2ORC is tiny \\[2\\]. *(contradicted: a source says the opposite)*" in markdown
    assert "SPECTER uses citations \\[1\\]." in markdown and "uses citations \\[1\\]. *(" not in markdown

    rendered = to_html(answer)
    assert rendered.count('<li value="1"') == 1 and "pp. 3, 6" in rendered
    assert 'class="sentence partial" title="Partly supported' in rendered
    assert 'class="sentence contradicted" title="Contradicted' in rendered

    assert [entry["ID"] for entry in bibtexparser.loads(to_bibtex(answer)).entries] == ["cohan2020specter",
                                                                                      "lo2020s2orc"]
    record = answer_to_dict(answer)
    assert [paper["pages"] for paper in record["papers"]] == [[3, 6], [2]]
    again = answer_from_dict(json.loads(json.dumps(record)))
    assert again.papers == answer.papers and [s.support for s in again.sentences] == ["supported", "partial",
                                                                                       "contradicted"]


def bibtex_scan(text: str) -> list[dict[str, str]]:
    """Entries as BibTeX's own scanner reads them: a ``{...}`` value ends at the brace that balances
    its opening one, a ``"..."`` value at the first quote outside braces, every brace counted, a
    backslash before it or not (bibtexparser is kinder)."""
    entries: list[dict[str, str]] = []
    position = 0
    while (start := text.find("@", position)) != -1:
        body_start = text.index("{", start) + 1
        key_end = text.index(",", body_start)
        fields: dict[str, str] = {"ID": text[body_start:key_end]}
        position = key_end + 1
        while True:
            match = re.compile(r"\s*(\w+)\s*=\s*([{\"])").match(text, position)
            if match is None:
                break
            quoted = match.group(2) == '"'
            depth, cursor = 0 if quoted else 1, match.end()
            while True:
                char = text[cursor]
                cursor += 1
                if quoted and char == '"' and depth == 0:
                    break
                depth += {"{": 1, "}": -1}.get(char, 0)
                if not quoted and depth == 0:
                    break
            fields[match.group(1)] = text[match.end():cursor - 1]
            position = cursor
            if text[position] == ",":
                position += 1
        closing = re.compile(r"\s*\}").match(text, position)
        assert closing is not None, f"entry {fields['ID']} ends early: {text[position:][:80]!r}"
        position = closing.end()
        entries.append(fields)
    return entries


def test_stray_braces_in_a_title_cannot_end_a_bibtex_field_early() -> None:
    answer = answer_citing(
        _ref(1, "a", "Robust} fitting of {x} models and {y", ("Ann } Author",), 2021),
        _ref(2, "b", "A title with \\} and {{nested}} braces", ("B. Writer",), 2019),
    )
    bibtex = to_bibtex(answer)
    scanned = bibtex_scan(bibtex)
    assert [sorted(entry) for entry in scanned] == [["ID", "author", "title", "year"]] * 2, bibtex
    assert scanned[0]["year"] == "2021" and scanned[1]["year"] == "2019"
    assert "fitting of" in scanned[0]["title"] and "models and" in scanned[0]["title"]
    parsed = bibtexparser.loads(bibtex)
    assert [entry["year"] for entry in parsed.entries] == ["2021", "2019"]
    assert parsed.entries[0]["author"] in ("Ann Author", "Author, Ann")


@pytest.mark.parametrize("payload", ['=2+5+cmd|"/C calc"!A0', "@SUM(1)+cmd|' /C calc'!A0", "+1+1", "-2+3",
                                     "\t=1+1", "\r=1+1"])
def test_csv_cells_cannot_start_a_spreadsheet_formula(payload: str) -> None:
    cell = TableCell(f"{payload} is the answer.", payload, "evil-0001", 0, len(payload), 1)
    row = PaperRow("evil", Bibliography(payload, authors=(payload, "Other Author"), year=2020, doi="10.1/x"), (cell,))
    table = PaperTable("q?", (TableColumn(payload, "What is the answer?"),), (row,), 1, 1)
    parsed = list(csv.reader(io.StringIO(to_csv(table), newline="")))
    assert parsed[0][0] == "paper" and len(parsed) == 2
    for text in (*parsed[0], *parsed[1]):
        assert not text.startswith(("=", "+", "-", "@", "\t", "\r")), (text, parsed)
    assert parsed[1][0] == "'" + " ".join(payload.split())  # the text itself is kept, after the quote
