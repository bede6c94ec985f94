"""The support judge: does a passage support a claim, contradict it, or neither?

A small cross-encoder (all-MiniLM-L6-v2 fine-tuned here to read "claim [SEP] evidence" as
supports / refutes / neutral, shipped as int8 ONNX in ``resources/models/judge``; rebuilt by
``benchmarks/train_judge.py``) reads the best few sentence windows of each passage, all in one
batch, and the deterministic checks of :mod:`engine.cite.checks` veto what the model cannot see
(a changed number, a dropped "not", "lower" for "higher"). Verdicts, strongest first:

- ``supported``: a window entails the claim (its quote is the citation's quote);
- ``partial``: the claim's main clause is supported but an added clause (", which ...") is not;
- ``contradicted``: a window says the opposite (the model reads "refutes" as most likely, or a polarity
  check clashes and the model's P(refutes) agrees; a check alone never decides it), and none supports it;
- ``unsupported``: anything else.

The thresholds on the model's probabilities travel with the model in ``judge.json``; they are
fitted on held-out training-side data by ``benchmarks/verify.py --fit`` (docs/history/verification.md).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from engine.cite.checks import CheckResult, both_directions, check, main_clause, misplaced_numbers
from engine.cite.markers import strip_markers
from engine.cite.readings import abbreviations, second_reading
from engine.cite.table_rows import cell_reads, other_column
from engine.cite.windows import content_words, overlap, quote_windows
from engine.errors import ModelFileError, ModelNotFoundError, TelemetryLiveError
from engine.process import ONNX_RUNTIME_CAME_FIRST, onnx_runtime_telemetry_live
from engine.text.sentences import split_sentences
from engine.text.table_rows import read_row
from engine.tuning import CITATION

VERDICTS = ("supported", "partial", "unsupported", "contradicted")
_RANK = {"supported": 3, "partial": 2, "contradicted": 1, "unsupported": 0}
# The numbers chosen for judging, with where each came from: engine/tuning.py (the fitted thresholds on the
# model's probabilities travel with the model instead, see the module docstring).
WINDOWS_PER_PASSAGE = CITATION.judge_windows  # judged windows of a passage, chosen by word overlap
WHOLE_EVIDENCE_CHARS = 700  # evidence this short is also judged as a whole
MIN_WINDOW_WORDS = CITATION.min_window_words  # content words a window needs before the model is asked about it
# A window must hold this share of the claim's content words to be read as contradicting it (engine/tuning.py).
SAME_TOPIC = CITATION.contradiction_topic_share
CACHE_SIZE = 4096
VETO = CITATION.veto  # P(refutes) at which the model vetoes a window the similarity gate lets through
NOT_STATED = "the passage does not state this"  # the reason when the model, not a check, found no support
SAYS_OTHERWISE = "the passage says otherwise"  # the reason when the model, not a check, found a contradiction

@dataclass(frozen=True)
class Thresholds:
    """Cut-offs on the model's probabilities (fitted; see the module docstring)."""

    supported: float = 0.5  # P(supports) of a window at or above which it supports the claim
    contradicted: float = 0.5  # P(refutes) at or above which a window contradicts the claim


@dataclass(frozen=True)
class Judgement:
    """The verdict on one claim against one passage; ``quote`` is ``passage[start:end]`` verbatim."""

    verdict: str
    score: float  # P(supports) of the deciding window, 0 when a check vetoed it
    contradiction: float  # P(refutes) of the deciding window
    start: int
    end: int
    quote: str
    reason: str = ""

    @property
    def supports(self) -> bool:
        return self.verdict == "supported"


@dataclass
class _Window:
    passage: int
    start: int
    end: int
    text: str
    probs: np.ndarray = field(default_factory=lambda: np.zeros(3, dtype=np.float32))
    similarity: float | None = None  # the similarity gate's score of the claim against this window
    head_similarity: float | None = None  # the same for the claim's main clause
    reads: str = ""  # what the model reads, when not the span's own text (a table cell with its row's name)

    @property
    def read(self) -> str:
        return self.reads or self.text


# (claim, passage) -> scored windows (start, end, similarity), best first: the similarity scorer's ranking.
Ranker = Callable[[str, str], Sequence[tuple[int, int, float]]]


def default_judge_folder() -> Path:
    """The judge shipped inside the package."""
    return Path(str(resources.files("resources") / "models" / "judge"))


class PairModel:
    """The int8 ONNX cross-encoder: (claim, evidence) pairs -> probabilities (supports, refutes, neutral)."""

    def __init__(self, folder: Path | None = None, threads: int | None = None, meta_name: str = "judge.json",
                 what: str = "support judge", rebuild_with: str = "benchmarks/train_judge.py") -> None:
        """``meta_name``, ``what`` and ``rebuild_with`` name another model of the same shape (the answer reader)."""
        folder = folder or default_judge_folder()
        model_file, tokenizer_file = folder / "model.int8.onnx", folder / "tokenizer.json"
        meta_file = folder / meta_name
        if not (model_file.is_file() and tokenizer_file.is_file() and meta_file.is_file()):
            missing = ", ".join(f.name for f in (model_file, tokenizer_file, meta_file) if not f.is_file())
            raise ModelNotFoundError(f"The {what} is missing from {folder} ({missing}); reinstall Quire, or "
                                     f"rebuild it with {rebuild_with}.")
        if onnx_runtime_telemetry_live():
            raise TelemetryLiveError(f"The {what} does not run in this process: {ONNX_RUNTIME_CAME_FIRST}")
        import onnxruntime as ort
        from tokenizers import Tokenizer

        rebuild = f"reinstall Quire, or rebuild it with {rebuild_with}"
        try:
            self.meta: dict[str, Any] = json.loads(meta_file.read_text(encoding="utf-8"))
            self.max_length = int(self.meta.get("max_length", 160))
        except (OSError, ValueError) as exc:
            raise ModelFileError(str(meta_file), f"the {what}'s settings cannot be read ({exc}); {rebuild}") \
                from exc
        try:
            self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        except Exception as exc:  # the tokenizers library raises its own exception type
            raise ModelFileError(str(tokenizer_file), f"the {what}'s tokenizer is damaged ({exc}); {rebuild}") \
                from exc
        self.tokenizer.enable_truncation(self.max_length, strategy="longest_first")
        self.tokenizer.enable_padding()
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        try:
            self.session = ort.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # ONNX Runtime's errors (InvalidProtobuf, Fail, ...) share no base class
            raise ModelFileError(str(model_file), f"the {what}'s model is damaged and cannot be loaded; {rebuild}") \
                from exc
        self._lock = threading.Lock()  # one run at a time: the session is shared by every caller
        # A graph that quantizes its activations at run time (ONNX Runtime's dynamic int8, as the support judge
        # ships; its settings say so, as the export wrote them) computes one int8 scale over the whole batch,
        # padding included, so a pair's outputs would depend on what else is in its batch (measured on 64
        # HealthVer pairs: logits 0.13 from the pair's own on average, at most 0.39, one verdict in 64 changed).
        # It runs one pair at a time, which on two cores is no slower (200 pairs: 1.50 s against 1.65-1.74 s at
        # 32). Settings that do not say are read as such a graph.
        self.batch_size = 1 if self.meta.get("quantized_activations", True) else WEIGHT_ONLY_BATCH
        fitted = self.meta.get("thresholds") or {}
        self.thresholds = Thresholds(**{k: float(v) for k, v in fitted.items() if k in Thresholds.__dataclass_fields__})

    def probabilities(self, pairs: Sequence[tuple[str, str]], batch_size: int | None = None) -> np.ndarray:
        """Softmax probabilities, one row (supports, refutes, neutral) per pair."""
        logits = self.logits(pairs, batch_size)
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        return shifted / shifted.sum(axis=1, keepdims=True)

    def logits(self, pairs: Sequence[tuple[str, str]], batch_size: int | None = None) -> np.ndarray:
        """The graph's raw outputs, one row per pair; ``batch_size`` None: the graph's own (see __init__)."""
        width = len(self.meta.get("labels", ())) or 3
        if not pairs:
            return np.zeros((0, width), dtype=np.float32)
        batch_size = batch_size or self.batch_size
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))  # pad less
        result = np.zeros((len(pairs), width), dtype=np.float32)
        for first in range(0, len(order), batch_size):
            chunk = order[first:first + batch_size]
            encodings = self.tokenizer.encode_batch([pairs[i] for i in chunk])
            feeds = {name: np.array([getattr(e, attr) for e in encodings], dtype=np.int64)
                     for name, attr in (("input_ids", "ids"), ("attention_mask", "attention_mask"),
                                        ("token_type_ids", "type_ids"))}
            with self._lock:
                result[chunk] = self.session.run(["logits"], feeds)[0]
        return result


# Pairs run together in a graph with int8 weights and float activations (the answer reader): one pair's
# outputs do not depend on the others (measured: identical), and 8 at a time ran 32 sentences in 2.1 s
# against 2.5 s at 32 (less padding) and 2.8 s one at a time.
WEIGHT_ONLY_BATCH = 8


class SupportJudge:
    """Judges claims against passages with the pair model and the deterministic checks."""

    def __init__(self, model: PairModel | None = None, thresholds: Thresholds | None = None,
                 windows_per_passage: int = WINDOWS_PER_PASSAGE, ranker: Ranker | None = None,
                 similarity_floor: float | None = None) -> None:
        """``ranker`` (the similarity scorer's window ranking) chooses the windows the model reads; with a
        ``similarity_floor`` it is also a gate: a window then supports the claim only when its similarity
        reaches the floor, the checks find no clash and the model does not call it a contradiction."""
        self.model = model or PairModel()
        self.thresholds = thresholds or self.model.thresholds
        self.windows_per_passage = windows_per_passage
        self.ranker = ranker
        self.similarity_floor = similarity_floor
        # Verdicts by (claim, passage, whole, aliases): verification judges a text's sentences in one batch first,
        # then asks sentence by sentence. Bounded: cleared when it grows past CACHE_SIZE.
        self._cache: dict[tuple[str, str, bool, int], Judgement] = {}
        self._cache_lock = threading.Lock()

    def gated(self, ranker: Ranker, similarity_floor: float) -> SupportJudge:
        """This judge's model and thresholds with the similarity gate on (a judge of its own, own cache):
        how the previous, weaker judge ran, kept so benchmarks/verify.py can measure against it."""
        return SupportJudge(self.model, self.thresholds, self.windows_per_passage, ranker, similarity_floor)

    def judge(self, claim: str, passage: str) -> Judgement:
        """The verdict on ``claim`` against one passage."""
        return self.judge_passages(claim, [passage])[0]

    def judge_passages(self, claim: str, passages: Sequence[str], whole: bool = False) -> list[Judgement]:
        """The verdict on ``claim`` against each passage, all windows judged in one batch."""
        return self.judge_many([(claim, passage) for passage in passages], whole)

    def judge_many(self, items: Sequence[tuple[str, str]], whole: bool = False,
                   aliases: Mapping[str, str] | None = None) -> list[Judgement]:
        """Verdicts for many (claim, passage) items; every window of every item goes in one batch.
        ``aliases`` ({long form: abbreviation}, e.g. from all of an answer's sources) let a claim be
        read in its sources' words; without them each passage's own definitions are used."""
        signature = hash(tuple(sorted(aliases.items()))) if aliases else 0
        keys = [(claim, passage, whole, signature) for claim, passage in items]
        with self._cache_lock:
            known = {key: self._cache[key] for key in keys if key in self._cache}
        missing = list(dict.fromkeys(key for key in keys if key not in known))
        if missing:
            fresh = self._judge_uncached([(claim, passage) for claim, passage, _, _ in missing], whole, aliases)
            with self._cache_lock:
                if len(self._cache) > CACHE_SIZE:
                    self._cache.clear()
                self._cache.update(zip(missing, fresh, strict=True))
            known.update(zip(missing, fresh, strict=True))
        return [known[key] for key in keys]

    def _judge_uncached(self, items: Sequence[tuple[str, str]], whole: bool,
                        aliases: Mapping[str, str] | None = None) -> list[Judgement]:
        claims = [" ".join(strip_markers(claim).split()) for claim, _ in items]
        heads = [main_clause(claim) for claim in claims]
        # The claim in its sources' words (engine/cite/readings.py); not behind the similarity gate.
        readings = [second_reading(claim, aliases if aliases is not None else abbreviations([passage]), passage)
                    if self.similarity_floor is None else "" for claim, (_, passage) in zip(claims, items, strict=True)]
        windows = [self._windows(claim, passage, whole) for claim, (_, passage) in zip(claims, items, strict=True)]
        if self.ranker is not None and self.similarity_floor is not None:
            for head, item_windows, (_, passage) in zip(heads, windows, items, strict=True):
                if head and item_windows:
                    scores = {(start, end): score for start, end, score in self.ranker(head, passage)}
                    for window in item_windows:
                        window.head_similarity = scores.get((window.start, window.end),
                                                            max(scores.values(), default=0.0))
        pairs: list[tuple[str, str]] = []
        for claim, head, reading, item_windows in zip(claims, heads, readings, windows, strict=True):
            for text in (claim, head, reading):
                if text:
                    pairs.extend((text, w.read) for w in item_windows)
        probabilities = self.model.probabilities(pairs)
        row = 0
        results = []
        for claim, head, reading, item_windows, (_, passage) in zip(claims, heads, readings, windows, items,
                                                                      strict=True):
            count = len(item_windows)
            blocks = {}
            for name, text in (("claim", claim), ("head", head), ("reading", reading)):
                if text:
                    blocks[name] = probabilities[row:row + count]
                    row += count
            for offset, window in enumerate(item_windows):
                window.probs = blocks["claim"][offset]
            judgement = self._decide(claim, head, item_windows, blocks.get("head"), reading, blocks.get("reading"))
            # A cell read alone cannot see that the claim names another column: the whole row is checked.
            problem = other_column(claim, passage) if judgement.verdict in ("supported", "partial") else None
            if problem is not None:
                judgement = replace(judgement, verdict="unsupported", score=0.0, reason=problem.reason)
            results.append(judgement)
        return results

    def _windows(self, claim: str, passage: str, whole: bool) -> list[_Window]:
        """The passage's sentence windows that share most words with the claim (and the whole when asked)."""
        # A window too short to state anything (a figure label "A", a heading) supports nothing.
        candidates = [_Window(0, w.start, w.end, w.text) for w in quote_windows(passage)
                      if len(content_words(w.text)) >= MIN_WINDOW_WORDS]
        row = read_row(passage)
        if row is not None:  # a table row: each cell too, read with the row's name (engine/cite/table_rows.py)
            if not candidates:  # and the row itself, for a claim on more than one of its cells
                candidates.append(_Window(0, 0, min(len(passage), WHOLE_EVIDENCE_CHARS),
                                          passage[:WHOLE_EVIDENCE_CHARS]))
            candidates.extend(_Window(0, start, end, passage[start:end], reads=reads)
                              for start, end, reads in cell_reads(row))
        stripped = passage.strip()
        if len(content_words(stripped)) < MIN_WINDOW_WORDS:
            return []  # nothing here can state a claim: judged unsupported without asking the model
        if whole and len(stripped) <= WHOLE_EVIDENCE_CHARS:
            start = passage.index(stripped)
            candidates.append(_Window(0, start, start + len(stripped), stripped))
        if not candidates:  # a passage with no prose-like sentence: judge its start
            start = passage.index(stripped)
            end = start + min(len(stripped), WHOLE_EVIDENCE_CHARS)
            candidates.append(_Window(0, start, end, passage[start:end]))
        if self.ranker is not None:
            scores = {(start, end): score for start, end, score in self.ranker(claim, passage)}
            best = max(scores.values(), default=0.0)
            for window in candidates:  # the whole evidence holds its best window
                window.similarity = scores.get((window.start, window.end), best)
            candidates.sort(key=lambda w: (-(w.similarity or 0.0), w.end - w.start))
        else:
            words = content_words(claim)
            candidates.sort(key=lambda w: (-overlap(words, content_words(w.read)), w.end - w.start))
        chosen: list[_Window] = []
        seen: set[tuple[int, int]] = set()
        for window in candidates:
            if (window.start, window.end) not in seen:
                seen.add((window.start, window.end))
                chosen.append(window)
            if len(chosen) >= self.windows_per_passage + (1 if whole else 0):
                break
        if row is not None and all(window.reads for window in chosen):
            # A claim on two cells needs the whole row: its best window is judged beside the cells.
            chosen.extend([window for window in candidates if not window.reads][:1])
        return chosen

    def _decide(self, claim: str, head: str, windows: list[_Window], head_probs: np.ndarray | None,
                reading: str = "", reading_probs: np.ndarray | None = None) -> Judgement:
        if not windows:
            return Judgement("unsupported", 0.0, 0.0, 0, 0, "", "the passage has no text to judge")
        best: Judgement | None = None
        for index, window in enumerate(windows):
            verdict = self._window_verdict(claim, window.read, window.probs, window.similarity)
            if verdict[0] != "supported" and reading_probs is not None:
                read = self._window_verdict(reading, window.read, reading_probs[index])
                if read[0] == "supported":
                    verdict = read
            if verdict[0] == "unsupported" and head_probs is not None:
                head_verdict = self._window_verdict(head, window.read, head_probs[index], window.head_similarity)
                if head_verdict[0] == "supported":
                    verdict = ("partial", head_verdict[1], head_verdict[2],
                               "the passage supports the first part of the claim, not what is added after it")
            judgement = Judgement(verdict[0], round(verdict[1], 4), round(verdict[2], 4), window.start, window.end,
                                  window.text, verdict[3])
            if best is None or (_RANK[judgement.verdict], judgement.score) > (_RANK[best.verdict], best.score):
                best = judgement
        assert best is not None
        return best

    def _window_verdict(self, claim: str, window: str, probs: np.ndarray,
                        similarity: float | None = None) -> tuple[str, float, float, str]:
        """(verdict, support score, P(refutes), reason) of one window, the checks applied. The support
        score is P(supports), or the similarity when the gate is on."""
        p_support, p_refute = float(probs[0]), float(probs[1])
        if states_word_for_word(claim, window):
            # The passage's own sentence: the six-layer model has read "our results are not comparable with
            # those in Luan et al." as refuting itself (P 0.60); what a passage says word for word it says.
            return "supported", max(p_support, self.thresholds.supported), p_refute, ""
        problem = check(claim, window)
        if problem is not None:
            if self._says_otherwise(claim, window, problem, probs):
                return "contradicted", 0.0, max(p_refute, 0.5 if problem.contradicts else 0.0), problem.reason
            return "unsupported", 0.0, p_refute, problem.reason
        model_refutes = p_refute >= self.thresholds.contradicted and p_refute > p_support
        if similarity is not None and self.similarity_floor is not None:
            # Behind the gate the model only vetoes, and only when it finds "refutes" more likely than the
            # other two answers together: its fitted cut-off (made for three-way verdicts) vetoed true
            # sentences of the labelled corpus pairs.
            model_refutes = p_refute >= max(self.thresholds.contradicted, VETO) and p_refute > p_support
            if similarity >= self.similarity_floor and not model_refutes:
                return "supported", similarity, p_refute, ""
            if model_refutes and similarity >= self.similarity_floor:
                return "contradicted", similarity, p_refute, SAYS_OTHERWISE
            return "unsupported", similarity, p_refute, NOT_STATED
        if p_support >= self.thresholds.supported and p_support >= p_refute:
            return "supported", p_support, p_refute, ""
        if self._model_refutes(probs):
            return "contradicted", p_support, p_refute, SAYS_OTHERWISE
        return "unsupported", p_support, p_refute, NOT_STATED

    def _model_refutes(self, probs: np.ndarray) -> bool:
        """The model reads the window as saying otherwise: "refutes" reaches its cut-off and is its most likely
        answer. Below that the window is only not support: a P(refutes) of 0.3 beside a P(neutral) of 0.6 is a
        passage on something else, and marking it contradicted put a red line through true sentences."""
        p_support, p_refute, p_neutral = float(probs[0]), float(probs[1]), float(probs[2])
        return p_refute >= self.thresholds.contradicted and p_refute > p_support and p_refute >= p_neutral

    def _says_otherwise(self, claim: str, window: str, problem: CheckResult, probs: np.ndarray) -> bool:
        """Whether a window a check vetoed also says the opposite (the sentence is then marked contradicted, not
        just unsupported). A check alone never decides it: the writer's paraphrase of a passage trips the
        checks on a sibling sentence of it ("up to 5 training triples" against "2 hard negatives ... and 3
        easy negatives"). A polarity or direction clash on the same topic counts where the model's P(refutes)
        reaches its cut-off too; a number only where the window gives another value to the same thing and
        the model reads it as refuting; an added clause or a list item the window lacks is not stated, never
        contradicted (benchmarks/contradicted.py)."""
        if problem.kind == "direction" and both_directions(claim):
            return False  # the clash may be with the claim's other clause: not supported, not contradicted
        if problem.kind in ("negation", "direction"):
            return on_topic(claim, window) and float(probs[1]) >= self.thresholds.contradicted
        if problem.kind == "number":
            return bool(misplaced_numbers(claim, window)) and self._model_refutes(probs)
        return False




def on_topic(claim: str, window: str) -> bool:
    """Whether the window is on what the claim says, not only on its subject: it holds ``SAME_TOPIC`` of the
    claim's content words. The model reads "same subject, another statement" as refuting ("CiteSee is a mobile
    app." against "The front-end of CiteSee was built on the open-source ScholarPhi codebase.", P(refutes)
    0.98): a negation or direction clash counts only on topic, and so does the model's own contradiction of a
    passage that search found rather than one given as the claim's evidence (engine/cite/claims.py)."""
    return overlap(content_words(claim), content_words(window)) >= SAME_TOPIC


def _plain(text: str) -> str:
    return " ".join(text.replace("“", "").replace("”", "").replace('"', "").lower().split()).rstrip(".;:!? ")


def states_word_for_word(claim: str, window: str) -> bool:
    """Whether one of the window's sentences is the claim itself (case, spacing, quotes and the closing stop
    aside): a whole sentence, so a clause the window puts under a "not" elsewhere is not taken for it."""
    wanted = _plain(claim)
    return len(content_words(claim)) >= MIN_WINDOW_WORDS and any(_plain(s) == wanted for s in split_sentences(window))


# (claim, passage text) -> a capable reader's support score when it reads the passage as supporting the
# claim, else None (engine/synthesis/support_reader.py)
Reader = Callable[[str, str], float | None]
READ_SUPPORTED = "the language model reads the passage as supporting this"  # a verdict a reader revised


def revisable(claim: str, passage: str, judgement: Judgement) -> bool:
    """Whether a better reader may revise this verdict: the judge's model alone found the passage silent
    or opposed (a small model misreads loose paraphrase both ways), and no check finds a clash anywhere in
    the passage (a number or a "not" it does not share: those verdicts stand, whoever reads)."""
    return judgement.verdict in ("unsupported", "contradicted") and judgement.reason in (NOT_STATED, SAYS_OTHERWISE) \
        and check(claim, passage) is None


_default_lock = threading.Lock()
_default: SupportJudge | None = None


def default_judge() -> SupportJudge:
    """The shipped judge, loaded once per process (it is read-only and thread-safe)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = SupportJudge()
        return _default
