"""Datastore import: streaming JSON lines, every bad line reported by number, resumable, bounded memory."""

from __future__ import annotations

import gzip
import json
import tracemalloc
from collections.abc import Iterable
from pathlib import Path

import pytest

from engine.datastore import reader as reader_module
from engine.datastore.importer import import_jsonl
from engine.datastore.passages import split_passages
from engine.datastore.reader import DatastoreInputError, JsonLinesReader, Record, parse_line
from engine.datastore.store import DatastoreStore
from engine.errors import Cancelled
from engine.progress import CancelToken, Progress
from engine.text.sentences import ends_sentence

SENTENCE = "Retrieval augmented models cite the passages they read. "


def paper(i: int, words: int = 60, **extra: object) -> dict[str, object]:
    body = " ".join(f"Paper {i} sentence {n} studies topic{i % 7} with care." for n in range(max(1, words // 8)))
    return {"id": f"p{i}", "title": f"Title of paper {i}", "text": body, **extra}


def write_jsonl(path: Path, lines: Iterable[object], *, gz: bool = False) -> Path:
    raw = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines).encode()
    path.write_bytes(gzip.compress(raw) if gz else raw)
    return path


@pytest.fixture
def store(tmp_path: Path) -> DatastoreStore:
    opened = DatastoreStore(tmp_path / "ds" / "datastore.db", create=True)
    yield opened
    opened.close()


def test_records_keep_their_original_ids_and_identity_fields(tmp_path: Path, store: DatastoreStore) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [
        paper(1, doi="https://doi.org/10.1000/ABC.1", year=2021, authors=[{"name": "Ada Lovelace"}, "Alan Turing"]),
        paper(2, url="https://arxiv.org/abs/2104.01234v2", year="2019-05-01"),
        {"id": 3, "title": "Int id", "text": "Short."},
    ])
    report = import_jsonl(store, "d", path)
    assert report.records_added == 3 and report.problem_count == 0
    rows = {r[0]: r[1:] for r in store.query("SELECT id, doi, arxiv_id, year, authors, norm_title FROM records")}
    assert set(rows) == {"p1", "p2", "3"}
    assert rows["p1"][0] == "10.1000/abc.1" and rows["p1"][2] == 2021
    assert json.loads(rows["p1"][3]) == ["Ada Lovelace", "Alan Turing"]
    assert rows["p2"][1] == "2104.01234" and rows["p2"][2] == 2019
    assert rows["p1"][4] == "title of paper 1"


def test_malformed_lines_are_reported_with_their_numbers_and_skipped(tmp_path: Path, store: DatastoreStore) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join([
        json.dumps(paper(1)).encode(),                 # 1 ok
        b'{"id": "x", "title": "t", "text": ',         # 2 cut-off JSON
        b"[1, 2, 3]",                                  # 3 not an object
        json.dumps({"title": "no id", "text": "words"}).encode(),   # 4 missing id
        json.dumps({"id": "no-text", "title": "t"}).encode(),       # 5 missing text
        json.dumps({"id": "typed", "title": 5, "text": "x"}).encode(),  # 6 wrong type
        b"",                                           # 7 blank: ignored, still counted
        b'{"id": "latin", "text": "caf\xe9"}',         # 8 not UTF-8
        json.dumps({"id": "empty", "title": "", "text": ""}).encode(),  # 9 nothing to search
        json.dumps(paper(10)).encode(),                # 10 ok
    ]) + b"\n")
    report = import_jsonl(store, "bad", path)
    assert report.records_added == 2
    problems = {p.line: p.reason for p in report.problems}
    assert sorted(problems) == [2, 3, 4, 5, 6, 8, 9]
    assert "not valid JSON" in problems[2]
    assert "not an object" in problems[3]
    assert "'id'" in problems[4] and "'text'" in problems[5] and "'title'" in problems[6]
    assert "UTF-8" in problems[8]
    assert report.problem_count == 7


def test_duplicate_ids_keep_the_first_copy_and_say_where_it_was(tmp_path: Path, store: DatastoreStore) -> None:
    lines = [paper(1), paper(2), {**paper(1), "title": "second copy"}, paper(3), {**paper(2), "title": "again"}]
    path = write_jsonl(tmp_path / "dup.jsonl", lines)
    # Batches of two: the duplicates of line 1 and 2 arrive in later transactions.
    report = import_jsonl(store, "dup", path, batch_records=2)
    assert report.records_added == 3
    reasons = {p.line: p.reason for p in report.problems}
    assert set(reasons) == {3, 5}
    assert "'p1'" in reasons[3] and "line 1" in reasons[3]
    assert store.query("SELECT title FROM records WHERE id='p1'")[0][0] == "Title of paper 1"
    # Another file with an id already stored: reported against that file.
    other = write_jsonl(tmp_path / "other.jsonl", [paper(3), paper(4)])
    again = import_jsonl(store, "dup", other)
    assert again.records_added == 1
    assert "dup.jsonl" in again.problems[0].reason


def test_a_gzip_cut_short_keeps_what_was_read_and_says_so(tmp_path: Path, store: DatastoreStore) -> None:
    whole = write_jsonl(tmp_path / "whole.jsonl.gz", [paper(i, words=200) for i in range(400)], gz=True)
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    report = import_jsonl(store, "cut", cut)
    assert report.ended_early and "ends early" in report.ended_early
    assert 50 < report.records_added < 400
    # Every stored record is complete: its passages hold the whole text.
    stored = store.query("SELECT count(*) FROM records WHERE passage_count = 0")[0][0]
    assert stored == 0


def test_not_a_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DatastoreInputError, match="not a file"):
        JsonLinesReader(tmp_path / "missing.jsonl")


def test_a_line_longer_than_the_limit_is_skipped_without_holding_it(tmp_path: Path, store: DatastoreStore,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader_module, "MAX_LINE_BYTES", 4096)
    monkeypatch.setattr(reader_module, "_CHUNK", 1024)
    huge = {"id": "huge", "title": "t", "text": "word " * 5000}
    path = write_jsonl(tmp_path / "long.jsonl", [paper(1), huge, paper(3)])
    report = import_jsonl(store, "long", path)
    assert report.records_added == 2
    assert [p.line for p in report.problems] == [2]
    assert "longer than" in report.problems[0].reason


def test_import_resumes_after_an_interruption_without_duplicates(tmp_path: Path, store: DatastoreStore) -> None:
    path = write_jsonl(tmp_path / "big.jsonl", [paper(i) for i in range(50)] + ["not json"] + [paper(i) for i in
                                                                                           range(50, 100)])
    cancel = CancelToken()

    def stop_after_first_batch(progress: Progress) -> None:
        if progress.stage == "import" and progress.done > 0:
            cancel.cancel()

    with pytest.raises(Cancelled):
        import_jsonl(store, "big", path, progress=stop_after_first_batch, cancel=cancel, batch_records=20)
    assert store.counts()["records"] == 20
    report = import_jsonl(store, "big", path, batch_records=20)
    assert report.resumed_from_line == 20
    assert report.records_added == 80
    assert store.counts()["records"] == 100
    assert [p.line for p in report.problems] == [51]  # reported once, not again as a duplicate
    assert import_jsonl(store, "big", path).already_imported


def test_passages_are_about_250_words_and_end_on_sentences() -> None:
    text = " ".join(f"Sentence number {n} talks about dense retrieval of scientific passages." for n in range(200))
    passages = split_passages(text, 250)
    assert len(passages) >= 7
    assert sum(len(p.split()) for p in passages) == len(text.split())
    for passage in passages[:-1]:
        assert 250 <= len(passage.split()) <= 400
        assert ends_sentence(passage.split()[-1])
    # No sentence ends at all: cut at 1.6x the target rather than one giant passage.
    run_on = " ".join(["word"] * 1000)
    assert max(len(p.split()) for p in split_passages(run_on, 250)) <= 400
    # A short tail joins the passage before it.
    assert len(split_passages(" ".join(["Short."] * 260), 250)) == 1
    assert split_passages("   ", 250) == []


def test_a_title_only_record_is_searchable_by_its_title(tmp_path: Path, store: DatastoreStore) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [{"id": "t1", "title": "Only a title here", "text": ""}])
    assert import_jsonl(store, "t", path).records_added == 1
    assert store.query("SELECT text FROM passages")[0][0] == "Only a title here"


def test_parse_line_accepts_s2_style_external_ids() -> None:
    record = parse_line(7, json.dumps({"id": "s2:1", "title": "T", "text": "x",
                                       "externalids": {"DOI": "10.5555/XYZ", "ArXiv": "1706.03762"}}).encode())
    assert isinstance(record, Record)
    assert (record.bib.doi, record.bib.arxiv_id, record.line) == ("10.5555/xyz", "1706.03762", 7)


@pytest.mark.slow
def test_a_large_file_is_streamed_in_bounded_memory(tmp_path: Path) -> None:
    """~60 MB of JSON lines (gzip) read and parsed with a Python heap peak a small fraction of the file."""
    path = tmp_path / "large.jsonl.gz"
    text = SENTENCE * 50
    count = 24_000
    with gzip.open(path, "wt", compresslevel=1) as handle:
        for i in range(count):
            handle.write(json.dumps({"id": f"L{i}", "title": f"Large {i}", "text": text}) + "\n")
    uncompressed = count * len(text)
    reader = JsonLinesReader(path)
    records = 0
    tracemalloc.start()
    try:
        for number, raw in reader.lines():
            records += isinstance(parse_line(number, raw), Record)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert records == count and reader.ended_early is None
    assert uncompressed > 60_000_000
    assert peak < 8_000_000, f"peak Python memory {peak / 1e6:.1f} MB while reading {uncompressed / 1e6:.0f} MB"



def test_the_bundled_demo_datastore_ships_with_its_notice() -> None:
    from engine.datastore.bundled import bundled_datastore

    path = bundled_datastore()
    notice = (path.parent / "NOTICE.md").read_text(encoding="utf-8")
    assert "SciREX" in notice and "SciTLDR" in notice and "Allen Institute for AI" in notice and "Apache" in notice
    reader = JsonLinesReader(path)
    first = next(iter(reader.lines()))
    parsed = parse_line(*first)
    assert isinstance(parsed, Record) and parsed.id.startswith(("scirex:", "scitldr:"))
