"""engine/text: the one stemmer agrees with FTS5's, one stop list, one splitter for text and words."""

from __future__ import annotations

import re
import sqlite3

from engine.store.vocabulary import TOKENIZER
from engine.text.abbreviations import is_abbreviation
from engine.text.artefacts import without_footnote_marks
from engine.text.sentences import ends_sentence, split_sentences, split_spans, starts_sentence
from engine.text.stem import stem
from engine.text.stopwords import CLAIM_FRAMING_WORDS, QUESTION_WORDS, SCIENCE_WORDS, STOP_WORDS
from engine.text.tokens import LETTERS, WORD_OR_NUMBER, lower_words

_VOCABULARY = """as is vs s embeddings embedding embedded citations cited studies study proteins protein
generalization generalize retrieval retrieved retrieving relational hopefully agreed running runs ran
sensitivity sensitive conditional rationalization formality electrical adjustable happiness caresses ponies
ties caress cats feed agreed plastered bled motoring sing conflated troubled sized hopping tanned falling
hissing fizzed failing filing happy sky triplicate formative formalize electriciti hopeful goodness""".split()


def _fts5_stems(words: list[str]) -> list[str]:
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize = '{TOKENIZER}')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    for rowid, word in enumerate(words, start=1):
        conn.execute("INSERT INTO t(rowid, x) VALUES (?, ?)", (rowid, word))
    by_row = {row: term for row, term in conn.execute("SELECT doc, term FROM v")}
    return [by_row[rowid] for rowid in range(1, len(words) + 1)]


def test_the_stemmer_agrees_with_the_fts5_index_word_for_word() -> None:
    assert [stem(w) for w in _VOCABULARY] == _fts5_stems(_VOCABULARY)


def test_plural_and_inflected_forms_share_a_stem() -> None:
    assert stem("embeddings") == stem("embedding") == stem("embedded")
    assert stem("studies") == stem("study")
    assert stem("is") == "is"  # short words pass through, as in FTS5


def test_each_stop_list_is_one_concern_and_function_words_are_not_repeated() -> None:
    assert {"the", "of", "onto", "between"} <= STOP_WORDS
    assert not (QUESTION_WORDS | CLAIM_FRAMING_WORDS | SCIENCE_WORDS) & STOP_WORDS
    assert "protein" not in STOP_WORDS | QUESTION_WORDS | CLAIM_FRAMING_WORDS | SCIENCE_WORDS


def test_tokens_keep_decimals_whole_only_where_asked() -> None:
    assert lower_words("Accuracy rose to 81.1% (COVID-19)", WORD_OR_NUMBER) == ["accuracy", "rose", "to", "81.1",
                                                                                 "covid", "19"]
    assert LETTERS.findall("COVID-19 in 2020") == ["COVID", "in"]


def test_abbreviations_and_initials_are_not_sentence_ends() -> None:
    assert is_abbreviation("e.g.") and is_abbreviation("(e.g.") and is_abbreviation("Figs.") and is_abbreviation("J.")
    assert not is_abbreviation("results.")
    assert split_sentences("Smith et al. showed it. See Fig. 2 for J. Doe's result. Done.") == [
        "Smith et al. showed it.", "See Fig. 2 for J. Doe's result.", "Done."]


def test_a_footnote_number_glued_after_the_stop_ends_the_sentence() -> None:
    # PDF text of SPECTER: without the split, its training sentence was quoted behind an equation's.
    text = "where v is the pooled output (Equation 1).6 Starting from the trained SciBERT model, we pretrain it."
    assert split_sentences(text) == ["where v is the pooled output (Equation 1).6",
                                     "Starting from the trained SciBERT model, we pretrain it."]
    assert split_sentences("It grew to 3.5 Million units. Then it fell.") == ["It grew to 3.5 Million units.",
                                                                                "Then it fell."]
    assert split_sentences("See Section 2.3 For details.") == ["See Section 2.3 For details."]


def test_a_footnote_on_a_line_of_its_own_ends_at_its_line() -> None:
    # ReVerb's PDF text: the footnote ends in a web address, and ran into the next paragraph's sentence.
    text = ("Our syntactic constraint leads the extractor to include nouns in the relation phrase, solving this "
            "problem.\n1The source code for REVERB is available at http:// reverb.cs.washington.edu/\nAlthough the "
            "syntactic constraint significantly reduces incoherent extractions, it allows overly-specific ones.")
    assert split_sentences(text)[1:] == [
        "1The source code for REVERB is available at http:// reverb.cs.washington.edu/",
        "Although the syntactic constraint significantly reduces incoherent extractions, it allows overly-specific "
        "ones."]
    # A line that opens with a number and a unit, or with a name that starts with a digit, is prose going on.
    for line in ("stimulated at\n10Hz for an hour, which\nThe cells", "the receptor\n5HT1A is expressed in\nNeurons"):
        assert len(split_sentences(line)) == 1, line


def test_two_footnotes_on_one_line_are_two_sentences() -> None:
    # S2ORC's PDF text: footnote 7 ran into footnote 8, and "pronounced “stork”" opened a quoted sentence.
    text = ("The output of this pipeline is visualized in Figure 1.\n7pronounced “stork” 8The papers included in "
            "S2ORC are a curated subset.\n13Unpaywall 2019-04-19 data dump 14We use the cld2 tool.")
    assert split_sentences(text)[1:] == ["7pronounced “stork”", "8The papers included in S2ORC are a curated subset.",
                                         "13Unpaywall 2019-04-19 data dump", "14We use the cld2 tool."]
    # A figure's panel, a count of residues, a concentration and a unit are not footnote marks.
    for prose in ("Spliced RNA (Figure 1Aii) was seen in most cells.", "A 6His-tagged protein was used.",
                  "The pellet was washed in 1Xprotease inhibitor buffer.", "All UMRs spanned 41Mbp in total."):
        assert split_sentences(prose) == [prose]
        assert without_footnote_marks(prose) == prose


def test_a_quotation_set_apart_ends_at_its_closing_mark() -> None:
    text = ("Wang et al. define faithfulness as:\n“Checking the factual errors in the summary, where a factual error "
            "is not entailed by the source document”\nWe conduct human annotation studies. It ends.")
    assert split_sentences(text)[1:] == ["We conduct human annotation studies.", "It ends."]
    # Within a paragraph a line break is a space, and a quoted word before a capital does not end anything.
    assert len(split_sentences("They call it “the fault” Smith et al. found it again.")) == 1
    assert len(split_sentences("the so-called “fault”\nmodel is old.")) == 1


def test_decimals_do_not_split_and_named_patterns_stay_with_the_sentence_before() -> None:
    marker = re.compile(r"\[\d+\]")
    text = "It rose by 3.5 points. [2] Then it fell."
    assert split_sentences(text, attached=marker) == ["It rose by 3.5 points. [2]", "Then it fell."]
    assert split_sentences(text) == ["It rose by 3.5 points.", "[2] Then it fell."]
    assert all(text[s.start:s.end].strip() == text[s.start:s.end] for s in split_spans(text))


def test_the_word_stream_splitter_uses_the_same_abbreviations() -> None:
    assert ends_sentence("done.") and ends_sentence("done.)") and ends_sentence("why?")
    assert not ends_sentence("e.g.") and not ends_sentence("Fig.") and not ends_sentence("A.")
    assert not ends_sentence("p.")  # "see p. 5": known to the text splitter, and now to the chunker too
    assert starts_sentence("The") and starts_sentence("3") and starts_sentence("(see") and not starts_sentence("and")


def test_the_named_function_word_lists_are_parts_of_the_one_stop_list() -> None:
    from engine.text.stopwords import COMMON_ENGLISH_WORDS, NUMBER_FRAME_WORDS

    assert COMMON_ENGLISH_WORDS < STOP_WORDS and NUMBER_FRAME_WORDS < STOP_WORDS
    assert {"the", "of", "which"} <= COMMON_ENGLISH_WORDS and {"of", "was", "and"} <= NUMBER_FRAME_WORDS


def test_the_short_title_words_of_capitals_titles_are_title_small_words() -> None:
    from engine.text.titles import CAPS_TITLE_SMALL_WORDS, TITLE_SMALL_WORDS

    assert CAPS_TITLE_SMALL_WORDS < TITLE_SMALL_WORDS


def test_ascii_folding_drops_accents_and_keeps_ascii() -> None:
    from engine.text.characters import ascii_fold

    assert ascii_fold("Gödel, Müller & Ørsted — naïve") == "Godel, Muller & rsted  naive"
    assert ascii_fold("plain text 42") == "plain text 42"


def test_no_module_outside_engine_text_folds_accents_or_spells_the_word_pattern_itself() -> None:
    """ASCII folding and what a word is live in engine/text; a copy elsewhere drifts from them."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "engine"
    pending: set[str] = set()
    copies = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative.startswith("text/") or relative in pending:
            continue
        source = path.read_text(encoding="utf-8")
        if '.encode("ascii", "ignore")' in source or 'r"[^\\W_]+"' in source or 'r"[^\\W\\d_]+"' in source:
            copies.append(relative)
    assert not copies, f"use engine.text (characters.ascii_fold, tokens.WORD / LETTERS) in: {copies}"
