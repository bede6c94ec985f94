"""Clean written output: headings that state nothing, no marker naming an unlisted reference, no
footnote digits of PDF extraction in the answer, and list items split where a reader splits them."""

from __future__ import annotations

from engine.cite.sentences import split_spans
from engine.synthesis.headings import section_heading
from engine.synthesis.write import parse_answer
from engine.text.artefacts import as_shown, without_footnote_marks

# The S2ORC passage as extracted: footnotes 7 and 8 glued to the words after them, 10 and 11 after commas.
S2ORC_EXTRACTED = ("The name S2ORC is 7pronounced “stork” 8The papers come from Semantic Scholar. We release "
                   "meta-data for over 20 million papers,10 meaningful citations dataset,11 models for figure "
                   "extraction.")


def test_footnote_digits_glued_to_words_are_removed() -> None:
    assert without_footnote_marks(S2ORC_EXTRACTED) == (
        "The name S2ORC is pronounced “stork” The papers come from Semantic Scholar. We release meta-data for over "
        "20 million papers, meaningful citations dataset, models for figure extraction.")


def test_numbers_units_and_names_that_look_alike_are_kept() -> None:
    text = "3D scans at 10mg, 5x faster in the 2nd run, 1,000 cells, p53, 12kDa, 10min, COVID-19, 5fold, 3 of 12."
    assert without_footnote_marks(text) == text


def test_a_heading_that_states_a_claim_becomes_a_sentence_to_verify() -> None:
    assert section_heading("The number of papers in S2ORC is 81.1 million.") == (
        "", "The number of papers in S2ORC is 81.1 million.")
    title, sentence = section_heading('For how many is full text available, the evidence states that "7pronounced')
    assert title == "" and sentence.startswith("For how many is full text available")


def test_a_heading_naming_the_evidence_cites_nothing_and_is_dropped() -> None:
    assert section_heading("Evidence [7]") == ("", "")
    assert section_heading("Source [2]:") == ("", "")
    assert section_heading("Training data [3]") == ("Training data", "")


def test_short_names_and_questions_stay_headings() -> None:
    assert section_heading("Training data") == ("Training data", "")
    assert section_heading("How is SPECTER trained?") == ("How is SPECTER trained?", "")
    assert section_heading("Related work") == ("Related work", "")


def test_a_heading_copied_from_the_evidence_is_not_a_heading() -> None:
    quote = "each training instance is a triplet of papers: a query paper, a positive paper and a negative paper"
    # A phrase copied from the evidence states nothing: neither a heading nor a sentence a citation seems to back.
    assert section_heading("A triplet of papers", [quote]) == ("", "")
    assert section_heading("Triplets of papers", [quote]) == ("Triplets of papers", "")
    # A statement copied from it is verified like any sentence.
    assert section_heading("Each training instance is a triplet of papers", [quote]) == (
        "", "Each training instance is a triplet of papers.")


def test_a_heading_longer_than_a_line_is_read_as_a_heading_and_verified_as_a_sentence() -> None:
    # As the 1.5B writer put it in an answer on S2ORC: a 141-character claim after "##".
    claim = ("The corpus contains substantially more structured full text papers and covers a more diverse set of "
             "academic disciplines than other resources.")
    written = parse_answer(f"S2ORC holds 8.1M full texts [1].\n## {claim}\nIt was built from PDFs [1].\n", 3, 2)
    assert [title for title, _ in written.sections] == [""]
    assert written.sections[0][1].startswith(claim) and "#" not in written.sections[0][1]


def test_a_reply_cut_at_the_token_limit_loses_its_unfinished_sentence_not_its_finished_ones() -> None:
    from fixtures.scripted_lm import ScriptedLM

    from engine.synthesis.evidence import Quote
    from engine.synthesis.write import Writer, WriterOptions, without_unfinished_end

    quote = Quote(1, 0, 60, "CiteSee highlights citations a user has seen before in yellow.", 1.0, 1.0)
    reply = ("CiteSee highlights reencountered citations in shades of yellow [1].\n## Conclusion\nIt uses yellow "
             "for papers the user opened [1]. This helps users efficiently identify")
    words = len(reply.split(" "))
    cut = Writer(ScriptedLM([reply]), WriterOptions(feedback=False, answer_tokens=words - 1)).write(
        "How does CiteSee highlight?", [quote], {1: "CiteSee"})
    text = " ".join([cut.written.direct, *(body for _, body in cut.written.sections)])
    assert "efficiently" not in text and text.endswith("opened [1].")
    # The model that stopped there itself is taken at its word (a list may end without a stop).
    whole = Writer(ScriptedLM([reply]), WriterOptions(feedback=False, answer_tokens=words + 10)).write(
        "How does CiteSee highlight?", [quote], {1: "CiteSee"})
    assert "efficiently identify" in " ".join(body for _, body in whole.written.sections)
    assert without_unfinished_end("It rose to 81.1M papers [1]. It also has e.g. the text of 8.1M") == (
        "It rose to 81.1M papers [1].")
    assert without_unfinished_end("no stop at all") == "no stop at all"


def test_the_s2orc_draft_gets_no_claim_heading_no_unlisted_evidence_heading_and_no_footnote_digit() -> None:
    draft = ("S2ORC contains 81.1M papers [1].\n"
             "**The number of papers in S2ORC is 81.1 million.**\n"
             "It is a corpus of academic papers [1].\n"
             "## Evidence [7]\n"
             "The name is 7pronounced “stork” [1].\n")
    written = parse_answer(draft, 3, 2, evidence=[S2ORC_EXTRACTED])
    titles = [title for title, _ in written.sections]
    bodies = " ".join(body for _, body in written.sections)
    assert all("[" not in title and not title.endswith(".") for title in titles), titles
    assert "The number of papers in S2ORC is 81.1 million." in bodies  # verified like any sentence
    assert "7pronounced" not in bodies and "pronounced “stork”" in bodies


def test_a_list_item_number_opens_its_item_not_the_lead_in() -> None:
    text = ("The two constraints ReVerb uses are: 1. A syntactic constraint that identifies relation phrases [1]. "
            "2. A lexical constraint [1].")
    assert [text[s.start:s.end] for s in split_spans(text)] == [
        "The two constraints ReVerb uses are:", "1. A syntactic constraint that identifies relation phrases [1].",
        "2. A lexical constraint [1]."]
    ends = "The value was 2. It rose."
    assert [ends[s.start:s.end] for s in split_spans(ends)] == ["The value was 2.", "It rose."]


def test_the_model_is_never_shown_the_glued_digits_and_the_digest_shows_the_quote_without_them() -> None:
    from engine.bibliography import Bibliography
    from engine.synthesis.digest import quote_sentence
    from engine.synthesis.evidence import Quote
    from engine.synthesis.prompts import evidence_block
    from engine.types import Reference

    start = S2ORC_EXTRACTED.index("The name")
    end = S2ORC_EXTRACTED.index("Semantic Scholar.") + len("Semantic Scholar.")
    quote = Quote(1, start, end, S2ORC_EXTRACTED[start:end], 1.0, 1.0)
    block = evidence_block([quote], {1: "S2ORC"})
    assert "7pronounced" not in block and "8The" not in block and "pronounced “stork” The papers" in block
    reference = Reference(1, "p1", "d1", "library", Bibliography("S2ORC"), S2ORC_EXTRACTED, page=1)
    sentence = quote_sentence(quote, {1: reference}, 0)
    assert "7pronounced" not in sentence.text and "pronounced “stork”" in sentence.text
    assert sentence.citations[0].quote == S2ORC_EXTRACTED[start:end]  # verbatim: the highlight still finds it


def test_a_written_list_keeps_its_item_numbers_through_cleaning() -> None:
    draft = ("ReVerb constrains relation phrases [1].\n## Constraints\nThe two constraints ReVerb uses are: "
             "1. A syntactic constraint on relation phrases [1]. 2. A lexical constraint on argument pairs [1].")
    [(title, body)] = parse_answer(draft, 2, 3).sections
    assert title == "Constraints" and body == (
        "The two constraints ReVerb uses are: 1. A syntactic constraint on relation phrases [1]. "
        "2. A lexical constraint on argument pairs [1].")


def test_a_mark_before_a_short_opening_word_or_after_the_last_full_stop_is_removed() -> None:
    # As the SPECTER paper's footnote 5 and the abstract's footnote 1 come out of its PDF.
    assert without_footnote_marks("5It is also possible to encode title and abstracts individually.") == (
        "It is also possible to encode title and abstracts individually.")
    assert without_footnote_marks("We show that SPECTER outperforms a variety of baselines on the benchmark.1") == (
        "We show that SPECTER outperforms a variety of baselines on the benchmark.")


def test_isotopes_versions_and_figure_numbers_stay() -> None:
    text = "4He and 56Fe abundances; 12C. In version 2.1 of the tool, see Fig.1 and Table 2. It was 3.5 In all."
    assert without_footnote_marks(text) == text


def test_a_quote_as_shown_has_no_glued_footnote_number_and_single_spaces() -> None:
    assert as_shown("12For SGC, we remove\ndevelopment  and test citations.") == \
        "For SGC, we remove development and test citations."
    assert as_shown("Treated with 10mg of p53 inhibitor in 3D culture.") == \
        "Treated with 10mg of p53 inhibitor in 3D culture."
