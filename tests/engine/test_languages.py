"""Papers and questions in other languages: text in its own script intact, sentences at their own
marks, keyword search that cuts and stems each language's words (real PDFs typeset by PyMuPDF)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pymupdf
import pytest

from engine.ingest.pipeline import parse_pdf
from engine.retrieve.fts import build_fts_query
from engine.store.vocabulary import TOKENIZER
from engine.text.keywords import keyword_text, segmenter_name
from engine.text.language import NO_LANGUAGE, UNKNOWN, detect_language, question_language
from engine.text.sentences import split_sentences

# Each language's sentences, typeset as one paragraph that wraps (right to left for Arabic). The Arabic
# avoids lam: MuPDF's HTML engine embeds Noto Naskh Arabic with wrong Unicode names for its lam forms
# (docs/languages.md, limits).
SENTENCES = {
    "zh": ["研究表明该模型在基准测试中表现优异。", "我们使用了三个公开数据集！", "结果可以复现吗？"],
    "ar": ["أظهرت دراسة تحسنا واضحا في نتائج مرضى تم تشخيصهم حديثا.", "هي صحيحة في كثير من مرضى؟",
           "نعم، تم تأكيد هذه نتائج في دراسات أخرى."],
    "ru": ["Результаты показывают явное улучшение точности на всех трёх наборах.",
           "Модель обучена на трёх открытых наборах данных."],
}
BOX = pymupdf.Rect(72, 72, 300, 500)


def typeset(path: Path, language: str) -> Path:
    document = pymupdf.open()
    direction = "rtl" if language == "ar" else "ltr"
    joiner = "" if language == "zh" else " "
    document.new_page().insert_htmlbox(
        BOX, f'<p dir="{direction}" style="font-size:13pt">{joiner.join(SENTENCES[language])}</p>')
    document.save(path)
    return path


@pytest.mark.parametrize("language", sorted(SENTENCES))
def test_a_pdf_in_its_own_script_gives_its_sentences_and_their_boxes(tmp_path: Path, language: str) -> None:
    parsed = parse_pdf(typeset(tmp_path / f"{language}.pdf", language))
    assert parsed.passages and all(p.language == language for p in parsed.passages)
    [passage] = parsed.passages
    assert len({box.rect.y0 for box in passage.rects}) >= 2  # the paragraph wraps
    sentences = split_sentences(passage.text)
    # Ingest folds full-width punctuation (！ -> !, as NFKC does) and a wrapped line may end in a line
    # break; the words are verbatim, in reading order.
    shown = [" ".join(s.split()).replace("!", "！").replace("?", "？") for s in sentences]
    assert shown == SENTENCES[language]
    for sentence in sentences:
        start = passage.text.index(sentence)
        boxes = passage.rects_for_span(start, start + len(sentence))
        assert boxes and all(box.page == 1 for box in boxes)
        assert all(BOX.x0 - 1 <= box.rect.x0 and box.rect.x1 <= BOX.x1 + 1 and BOX.y0 - 1 <= box.rect.y0
                   for box in boxes)
    # Sentences follow one another down the page.
    tops = [passage.rects_for_span(passage.text.index(s), passage.text.index(s) + 1)[0].rect.y0 for s in sentences]
    assert tops == sorted(tops)


def test_a_chinese_paragraph_that_wraps_runs_on_without_a_space(tmp_path: Path) -> None:
    sentence = "我们在三个公开数据集上评估了该模型，" * 6 + "结果显示其准确率明显高于以往的方法。"
    document = pymupdf.open()
    document.new_page().insert_htmlbox(pymupdf.Rect(72, 72, 300, 500), f'<p style="font-size:12pt">{sentence}</p>')
    document.save(tmp_path / "wrapped.pdf")
    [passage] = parse_pdf(tmp_path / "wrapped.pdf").passages
    assert len({box.rect.y0 for box in passage.rects}) > 3  # it did wrap
    assert passage.text == sentence.replace("，", ",")
    [found] = split_sentences(passage.text)
    assert len(passage.rects_for_span(0, len(found))) == len(passage.rects)


def test_arabic_words_keep_their_spaces() -> None:
    # Right-to-left words lie leftwards of each other: they are no kerning-split word to glue back.
    assert keyword_text("هي صحيحة", "ar").count(" ") == 1


def fts(passages: list[str]) -> sqlite3.Connection:
    """An FTS5 table as the catalog writes it: each text's keyword form, in its detected language."""
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE passages_fts USING fts5(text, tokenize = '{TOKENIZER}')")
    conn.executemany("INSERT INTO passages_fts(rowid, text) VALUES (?, ?)",
                     [(row, keyword_text(text, detect_language(text))) for row, text in enumerate(passages, 1)])
    return conn


def bm25(conn: sqlite3.Connection, question: str) -> list[int]:
    return [row for (row,) in conn.execute("SELECT rowid FROM passages_fts WHERE passages_fts MATCH ? "
                                           "ORDER BY bm25(passages_fts)", (build_fts_query(question),))]


CHINESE = ["研究表明，该模型在基准测试中表现优异，我们使用了三个公开数据集进行评估。",
           "气候变化导致全球平均气温上升，极端天气事件更加频繁。",
           "The transformer model was evaluated on three public benchmarks."]


def test_a_chinese_keyword_query_finds_its_passage_by_bm25_alone() -> None:
    assert segmenter_name() == "icu"
    assert bm25(fts(CHINESE), "气候变化对气温有什么影响？")[0] == 2
    assert bm25(fts(CHINESE), "模型的基准测试")[0] == 1


def test_a_mixed_script_passage_is_found_by_its_words_in_either_script() -> None:
    conn = fts(["我们在GLUE基准上评估了BERT模型，结果显著提高。", *CHINESE[1:]])
    assert bm25(conn, "BERT")[0] == 1
    assert bm25(conn, "基准评估")[0] == 1


def test_german_words_are_stemmed_as_german() -> None:
    passages = ["Die Untersuchungen zeigten, dass die Impfung die Sterblichkeit deutlich senkte.",
                "Der Klimawandel verändert die Niederschläge in den Alpen stark."]
    assert bm25(fts(passages), "Welche Untersuchung zur Sterblichkeit nach einer Impfung gibt es?")[0] == 1
    assert "untersuch" in keyword_text(passages[0], "de").split()


def test_english_text_is_indexed_exactly_as_before() -> None:
    text = "Embeddings of proteins were computed with a transformer (ESM-2)."
    assert keyword_text(text, "en") == text
    assert keyword_text(text, UNKNOWN) == text
    assert build_fts_query("How were protein embeddings computed?") == '"protein" OR "embeddings" OR "computed"'


def test_an_unknown_language_falls_back_to_unstemmed_words_without_error() -> None:
    assert detect_language("12 345 67.8") == UNKNOWN
    assert keyword_text("Lorem ipsum dolor", "xx") == "Lorem ipsum dolor"
    assert question_language("graphene models") == UNKNOWN  # too few words to tell
    assert build_fts_query("graphene models") == '"graphene" OR "models"'


def test_a_text_layer_of_private_use_codes_is_flagged_and_not_indexed() -> None:
    # What a font without a Unicode map leaves in the text layer: its own glyph codes.
    garbled = " ".join("".join(chr(0xE000 + (word * 7 + i) % 200) for i in range(5)) for word in range(80))
    assert detect_language(garbled) == NO_LANGUAGE
    assert keyword_text(garbled, NO_LANGUAGE) == ""
    # A passage that quotes a few such codes among real words is still text.
    assert detect_language("The fluorescence \ue104 signal rose sharply after treatment with the drug.") == "en"


def test_the_writer_is_told_to_answer_in_the_questions_language() -> None:
    from fixtures.scripted_lm import ScriptedLM

    from engine.synthesis.evidence import Quote
    from engine.synthesis.write import Writer, WriterOptions

    quote = Quote(1, 0, 63, "Remdesivir shortened the time to recovery in hospitalised adults.", 1.0, 1.0)
    for question, named in (("Verkürzt Remdesivir die Genesungszeit bei Erwachsenen im Krankenhaus?", "German"),
                            ("瑞德西韦能缩短住院成人的康复时间吗？", "Chinese"),
                            ("Does remdesivir shorten the time to recovery in hospitalised adults?", None)):
        lm = ScriptedLM(["Remdesivir shortened the time to recovery [1]."])
        Writer(lm, WriterOptions(feedback=False)).write(question, [quote], {1: "ACTT-1"})
        prompt = "\n".join(message.content for message in lm.calls[0])
        if named is None:
            assert "write your answer in" not in prompt
        else:
            assert f"The question is in {named}: write your answer in {named}." in prompt
            assert "copy them exactly as the papers write them" in prompt


@pytest.mark.slow  # a real library: ingest workers, the catalog, a datastore import
def test_the_library_and_a_datastore_store_each_passage_language_and_find_chinese_by_keywords(tmp_path: Path) -> None:
    import json

    from engine.embed import HashingEmbedder
    from engine.service import Engine

    papers = [typeset(tmp_path / f"{language}.pdf", language) for language in ("zh", "ru")]
    records = [{"id": f"c{n}", "title": "", "text": text} for n, text in enumerate(CHINESE)]
    (tmp_path / "zh.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                                       encoding="utf-8")
    with Engine(home=tmp_path / "home") as engine:
        engine.embedder = HashingEmbedder()  # keywords are what is tested
        list(engine.add_documents(papers))
        engine.add_datastore(tmp_path / "zh.jsonl", "zh", embed=False)
        library = sqlite3.connect(tmp_path / "home" / "library.db")
        assert sorted(row[0] for row in library.execute("SELECT language FROM passages")) == ["ru", "zh"]
        library.close()
        [hit] = engine.search("结果可以复现吗", k=1, source="library", lexical_only=True)
        assert Path(str(engine.document(hit.doc_id).path)).name == "zh.pdf"
        [store] = engine.datastore_sources()
        assert [pid for pid, _ in store.lexical(build_fts_query("全球气温上升"), 1)] == ["zh:c1#0"]


def test_a_question_in_chinese_or_arabic_shares_content_words_with_the_sentence_that_answers_it() -> None:
    """What the digest's "does this address the question" reads besides the embedder: with Porter alone a
    Chinese clause was one word and Arabic's article kept "البانثرز" apart from "بانثرز"."""
    from engine.cite.windows import content_words, overlap

    pairs = [("黑豹队的防守丢了多少分？", "黑豹队的防守只丢了 308分，在联赛中排名第六"),
             ("كم نقطة تخلى عنها دفاع البانثرز؟", "لم يتخلى فريق بانثرز سوى عن 308 نقطة، ليحتل المركز السادس")]
    for question, sentence in pairs:
        assert overlap(content_words(question), content_words(sentence)) >= 0.4, (question, sentence)
    assert content_words("The beads were washed twice in 10 mM Tris.") == {"bead", "wash", "twice", "10", "tri"}


def test_a_sentence_in_a_script_without_case_or_spaces_is_prose_and_ends_at_its_own_mark() -> None:
    """The digest quotes prose only: a Chinese sentence (no spaces) or an Arabic one (no capital letters)
    was never prose, so every such question was told that nothing addresses it."""
    from engine.cite.windows import not_prose, prose_like

    for sentence in ("黑豹队的防守只丢了 308分，在联赛中排名第六，同时也以 24 次拦截领先国家橄榄球联盟。",
                     "لم يتخلى فريق بانثرز سوى عن 308 نقطة، ليحتل المركز السادس في الدوري."):
        assert prose_like(sentence) and not not_prose(sentence), sentence
    assert not prose_like("Table 2 SPECTER SciBERT Citeomatic 80.0 76.0")


@pytest.mark.slow  # a real library and a datastore import
def test_a_chinese_question_of_a_chinese_datastore_is_answered_from_it(tmp_path: Path) -> None:
    import json

    from engine.request import AskRequest, RequestOptions, Scope
    from engine.service import Engine
    from engine.types import AnswerMode

    records = [{"id": f"c{n}", "title": "", "text": text} for n, text in enumerate(CHINESE)]
    (tmp_path / "zh.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                                       encoding="utf-8")
    with Engine(home=tmp_path / "home") as engine:
        engine.add_datastore(tmp_path / "zh.jsonl", "zh", embed=False)
        answer = engine.ask(AskRequest("气候变化导致全球平均气温如何变化？", scope=Scope(source="zh"), mode="digest",
                                       options=RequestOptions(rewrite=False, save=False)))
    assert answer.mode != AnswerMode.NO_EVIDENCE, answer.text
    assert "全球平均气温上升" in answer.text[:400]


def test_a_question_in_a_script_the_english_embedder_never_saw_is_searched_by_its_words() -> None:
    from engine.service_search import english_model_cannot_read
    from engine.types import MULTILINGUAL_EMBEDDER

    assert english_model_cannot_read("", "SPECTER 是如何训练的？")
    assert english_model_cannot_read("", "Как обучается модель SPECTER?")
    assert not english_model_cannot_read(MULTILINGUAL_EMBEDDER, "SPECTER 是如何训练的？")  # e5 reads it
    assert not english_model_cannot_read("", "How is SPECTER trained?")
    assert not english_model_cannot_read("", "Wie wird SPECTER trainiert?")  # Latin script: MiniLM helps (XQuAD de)
    assert not english_model_cannot_read("", "What is the α-helix content at 10 μm?")
