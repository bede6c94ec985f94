"""The groups benchmarks/train_reader.py trains the answer reader on: each question's answering sentence
against near misses and random sentences of its paper (optionally other papers' near misses, or another
paper's sentences to learn "nothing here answers"), the listwise loss over a group, and the hand-weighted
offsets with which a reader is trained on the product's combined score.
"""

from __future__ import annotations

import random
from typing import Any


def group(question: dict[str, Any], size: int, hard: int, rng: random.Random,
          foreign: int = 0) -> list[tuple[str, int]]:
    """The answering sentence first, then ``hard`` near misses, ``foreign`` near misses from other papers
    and random sentences of its paper up to ``size``, each as (paper, sentence index)."""
    paper = question["paper"]
    pool = question["hard"][:20]
    chosen = rng.sample(pool, min(hard, len(pool)))
    unsafe = set(question["also"]) | set(question.get("holding", ()))  # sentences that answer, or may
    others = [i for i in range(question["count"]) if i not in unsafe and i not in chosen]
    away = rng.sample(question.get("foreign", []), min(foreign, len(question.get("foreign", []))))
    chosen += rng.sample(others, min(size - 1 - len(chosen) - len(away), len(others)))
    return [(paper, question["positive"][0]), *((paper, i) for i in chosen), *((p, i) for p, i in away)]


def foreign_near_misses(questions: list[dict[str, Any]], data: dict[str, Any], papers: set[str],
                        pool: int = 20) -> None:
    """Each question's best BM25 sentences from the *other* training papers, as ``question["foreign"]``.

    A digest chooses its opening among the passages of several papers, so the reader also meets sentences
    of other papers on the same topic; trained only against its own paper's sentences it never learned to
    pass them over. A sentence holding the expert's answer text is never a near miss."""
    from sentence_bm25 import Bm25

    documents = [(paper, i) for paper in sorted(papers) for i in range(len(data["papers"][paper]))]
    index = Bm25([data["papers"][paper][i]["text"] for paper, i in documents])
    for question in questions:
        scores = index.scores(question["question"])
        answer = " ".join(str(question.get("answer", "")).lower().split())
        best = []
        for d in sorted(scores, key=lambda d: -scores[d]):
            paper, sentence = documents[d]
            text = " ".join(data["papers"][paper][sentence]["text"].lower().split())
            if paper == question["paper"] or (answer and answer in text):
                continue
            best.append((paper, sentence))
            if len(best) == pool:
                break
        question["foreign"] = best


class WrongPaper:
    """Groups for "nothing here answers": a question read against another paper's sentences (same source),
    its best BM25 matches there first, so the topic is near but the answer is absent."""

    def __init__(self, questions: list[dict[str, Any]], texts_of: dict[str, list[str]], data: dict[str, Any]) -> None:
        self.papers_of: dict[str, list[str]] = {}
        for question in questions:
            papers = self.papers_of.setdefault(question["source"], [])
            if question["paper"] not in papers:
                papers.append(question["paper"])
        self.data = data
        self.indexes: dict[str, Any] = {}

    def group(self, question: dict[str, Any], size: int, hard: int, rng: random.Random) -> list[tuple[str, int]]:
        from sentence_bm25 import Bm25

        papers = [p for p in self.papers_of[question["source"]] if p != question["paper"]]
        if not papers:
            return []
        paper = rng.choice(papers)
        if paper not in self.indexes:
            if len(self.indexes) > 2000:
                self.indexes.clear()
            self.indexes[paper] = Bm25([c["text"] for c in self.data["papers"][paper]])
        got = self.indexes[paper].scores(question["question"])
        best = sorted(got, key=lambda i: -got[i])[:hard]
        rest = [i for i in range(len(self.data["papers"][paper])) if i not in best]
        chosen = best + rng.sample(rest, min(size - len(best), len(rest)))
        return [(paper, i) for i in chosen]


def group_loss(logits: Any, sizes: list[int], answerable: list[bool], null: bool) -> Any:
    """Listwise loss per group: the answering sentence (listed first) against the rest. With ``null``, a
    fixed "nothing here answers" logit of 0 joins each group and is the target of a wrong paper's group,
    so a logit above 0 reads as "this sentence answers" (the head's bias sets where that is)."""
    import torch

    losses = []
    for part, has_answer in zip(torch.split(logits, sizes), answerable, strict=True):
        if null:
            part = torch.cat([part.new_zeros(1), part])
            losses.append(-torch.log_softmax(part, dim=0)[1 if has_answer else 0])
        else:
            losses.append(-torch.log_softmax(part, dim=0)[0])
    return torch.stack(losses).mean()


def drop_shared_words(question: str, answer: str, share: float, rng: random.Random) -> str:
    """``question`` with each content word it shares with its answering sentence dropped at rate ``share``.

    COVID-QA's experts wrote each question while reading its answer, so the answer holds the question's rarest
    words and a reader can learn to follow them; a user's question seldom does. Dropping some of them in training
    makes the reader use what is left: what is asked for, and the meaning of the rest."""
    from sentence_bm25 import words

    if share <= 0:
        return question
    shared = set(words(answer))
    tokens = question.split()
    kept = [t for t in tokens if not (set(words(t)) & shared and rng.random() < share)]
    return " ".join(kept) if len(kept) >= 3 else question


def with_hand_offsets(questions: list[dict[str, Any]], data: dict[str, Any], weight: float) -> None:
    """Each question's hand-weighted scores over its paper's sentences, times ``weight``, as ``question["hand"]``:
    the part of the product's score (engine.synthesis.evidence.answer_scores) the reader does not give."""
    from engine.cite.support import SupportScorer
    from engine.embed import SentenceTransformerEmbedder
    from engine.synthesis.evidence import hand_scores

    scorer = SupportScorer(SentenceTransformerEmbedder(quantize=False), judge=None)
    for question in questions:
        texts = [c["text"] for c in data["papers"][question["paper"]]]
        question["hand"] = [weight * float(value) for value in hand_scores(question["question"], texts, scorer)]
