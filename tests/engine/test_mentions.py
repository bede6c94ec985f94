"""A question naming something no passage found mentions is told so, and no quote stands as its answer;
a question naming something the library holds is never silenced, even where only a search for the name
alone finds it."""

from __future__ import annotations

from engine.bibliography import Bibliography
from engine.cite.support import SupportScorer
from engine.embed import HashingEmbedder
from engine.synthesis.digest import NO_ANSWER_HEADING
from engine.synthesis.mentions import NOT_MENTIONED, mentioned, names, not_mentioned_lead, unmentioned_names
from engine.synthesis.pipeline import AskOptions, ask
from engine.types import AnswerMode, SearchHit

CONSTRAINTS = ("Due to space constraints, we opted not to discuss our relation extraction models in this draft. "
               "This syntactic constraint excludes two popular benchmarks in summarization research.")
REVERB = ("ReVerb's syntactic constraint requires every relation phrase to be a verb, a verb followed by a "
          "preposition, or a verb followed by nouns, adjectives or adverbs ending in a preposition.")


def test_names_are_the_words_authors_spell_one_way() -> None:
    assert names("What is the ReVerb syntactic constraint?") == ["ReVerb"]
    assert names("Which metal ion coordinates binding to Csx23 in HEK293T cells?") == ["Csx23", "HEK293T"]
    assert names("How is SPECTER trained on SARS-CoV-2 papers and LLMs?") == ["SPECTER", "SARS-CoV-2", "LLMs"]
    assert names("Does a katE mutant survive type II stress in 2019?") == ["katE"]  # no numeral, no year
    assert names("Does deleting residues of Apollo reduce its binding to DNA-PKcs?") == ["DNA-PKcs"]
    assert names("How to realize Topology Optimization of Cavity-Based Second Harmonic Generation?") == []
    assert names("What do viruses need to replicate in cells?") == []


def test_mentions_ignore_case_spacing_hyphens_and_plurals() -> None:
    assert mentioned("HEK293T", ["cells were grown (HEK 293T) overnight"])
    assert mentioned("SciBERT", ["a vanilla SciB-\nERT model"])
    assert mentioned("LLMs", ["an LLM was asked"])
    assert not mentioned("ReVerb", [CONSTRAINTS])


def test_every_name_missing_is_reported_after_probing_each() -> None:
    probed: list[str] = []

    def probe(name: str) -> list[str]:
        probed.append(name)
        return [CONSTRAINTS]

    assert unmentioned_names("Is Pkdh1 expressed after Ift122 knockout?", [CONSTRAINTS], probe) == ["Pkdh1", "Ift122"]
    assert probed == ["Pkdh1", "Ift122"]
    assert unmentioned_names("What is the ReVerb constraint?", [CONSTRAINTS], lambda _: [REVERB]) == []
    assert unmentioned_names("Is Pkdh1 expressed in HEK293T cells?", ["HEK293T cells were used"], probe) == []
    assert unmentioned_names("What constraint excludes benchmarks?", [CONSTRAINTS], probe) == []
    many = " ".join(f"Gene{n}" for n in range(40)) + "?"  # a hostile list of names costs no 40 searches
    probed.clear()
    assert unmentioned_names(many, [CONSTRAINTS], probe) == [] and probed == []
    assert not_mentioned_lead(["Pkdh1", "Ift122"]).startswith(f"{NOT_MENTIONED} “Pkdh1” or “Ift122”, which")


def hit(text: str, n: int) -> SearchHit:
    return SearchHit(f"p{n}", f"d{n}", "library", Bibliography(f"Paper {n}"), text, score=1.0 / (n + 1), page=1)


def asked(question: str, found: list[SearchHit], by_name: list[SearchHit], mode: str = "digest") -> tuple:
    calls: list[str] = []

    def retrieve(query: str, k: int) -> list[SearchHit]:
        calls.append(query)
        return (found if query == question else by_name)[:k]

    options = AskOptions(relevance_threshold=0.0, mode=mode)  # type: ignore[arg-type]
    return ask(question, retrieve=retrieve, scorer=SupportScorer(HashingEmbedder()), options=options), calls


def test_a_digest_on_a_name_nobody_mentions_says_so_first() -> None:
    answer, calls = asked("What is the ReVerb syntactic constraint?", [hit(CONSTRAINTS, 0)], [hit(CONSTRAINTS, 0)])
    assert answer.mode is AnswerMode.DIGEST
    assert answer.text.startswith(f"{NOT_MENTIONED} “ReVerb”")
    assert answer.sentences[0].section == 0 and not answer.sentences[0].citations
    assert calls == ["What is the ReVerb syntactic constraint?", "ReVerb"]
    assert answer.references  # the closest passages are still shown, numbered
    assert answer.sections[0] == NO_ANSWER_HEADING  # the quote under the lead is the closest, not an answer


def test_a_name_found_only_by_searching_for_it_alone_keeps_the_answer() -> None:
    answer, _ = asked("What is the ReVerb syntactic constraint?", [hit(CONSTRAINTS, 0)], [hit(REVERB, 1)])
    assert not answer.text.startswith(NOT_MENTIONED)


def test_asking_for_prose_is_not_silenced() -> None:
    answer, calls = asked("What is the ReVerb syntactic constraint?", [hit(CONSTRAINTS, 0)], [], mode="write")
    assert not answer.text.startswith(NOT_MENTIONED) and calls == ["What is the ReVerb syntactic constraint?"]


def test_a_question_about_a_term_of_ordinary_words_names_it() -> None:
    from engine.synthesis.mentions import asked_phrase, unmentioned_names

    question = "How do graph attention networks weight a node's neighbours?"
    assert asked_phrase(question) == "graph attention networks"
    assert asked_phrase("How does the SPECTER model use citations?") == ""  # a name says it already
    assert asked_phrase("How are papers linked in the literature graph?") == ""  # one word: every library has it
    graph = ["The literature graph has 12M nodes of this type.", "Attention is paid to the nodes."]
    assert unmentioned_names(question, graph, lambda _: graph) == ["graph attention networks"]
    gat = ["Graph attention networks weight each neighbour by an attention coefficient."]
    assert unmentioned_names(question, graph, lambda _: gat) == []  # the probe search finds it


def test_a_question_asking_what_something_is_names_it_in_its_words() -> None:
    from engine.synthesis.mentions import asked_thing, unmentioned_names

    question = "What is the boiling point of liquid nitrogen at sea level?"
    assert asked_thing(question) == "the boiling point of liquid nitrogen at sea level"
    assert asked_thing("What were the results?") == ""  # too little to test
    assert asked_thing("What is the ReVerb syntactic constraint?") == ""  # a name: the name rule decides
    # Seen over 66 papers: three quotes on nitrogen in the ocean were put forward as its answer.
    ocean = ["Nitrogen (N) is essential for life on Earth.",
             "Importance of the diazotrophs as a source of new nitrogen in the ocean."]
    assert unmentioned_names(question, ocean, lambda _: ocean) == [asked_thing(question)]
    # A passage that words the answer otherwise still holds half of the question's words.
    boiling = ["At sea level liquid nitrogen boils at 77 K."]
    assert unmentioned_names(question, ocean, lambda _: boiling) == []
    covid = "What is the population-averaged infection fatality ratio?"
    assert unmentioned_names(covid, ["The infection fatality ratio averaged over the population is 1%."],
                             lambda _: []) == []
