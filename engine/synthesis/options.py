"""How one answer is made: the pipeline's options (the service fills them from the settings and the request)."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.synthesis.evidence import PER_PAPER, RELATIVE_RELEVANCE, RELEVANCE_THRESHOLD
from engine.synthesis.ralm import RetrievalWhileWriting
from engine.synthesis.write import WriterOptions


@dataclass(frozen=True)
class AskOptions:
    top_n: int = 12  # odd half: key passage cited 85.7 % with 8 passages, 90.5 % with 12
    mode: str = "auto"  # "auto": write, fall back to the digest if the draft fails verification
    feedback: bool = False  # self-feedback and one revision: two more LM calls (see write.py)
    quotes_per_passage: int = 2
    max_themes: int = 3
    relevance_threshold: float = RELEVANCE_THRESHOLD
    relative_relevance: float = RELATIVE_RELEVANCE
    per_paper: int = PER_PAPER
    min_supported: float = 0.5  # auto mode: share of citation-worthy sentences that must survive
    feedback_k: int = 2  # passages retrieved per feedback query
    # The model reads the best candidate sentences and says which answer (engine.synthesis.answer_judge);
    # off for models too small to read well (the service decides).
    judge_answers: bool = True
    # The same model reads again the written sentences the support judge leaves unsupported (support_reader);
    # it needs judge_answers (a model able to read).
    read_unsupported: bool = True
    writer: WriterOptions = field(default_factory=WriterOptions)
    # Search again while the draft is written and swap the passages shown (engine.synthesis.ralm); off: once.
    while_writing: RetrievalWhileWriting = field(default_factory=RetrievalWhileWriting)

    def as_pairs(self) -> tuple[tuple[str, str], ...]:
        return (("top_n", str(self.top_n)), ("mode", self.mode), ("feedback", str(self.feedback)),
                ("quotes_per_passage", str(self.quotes_per_passage)), ("max_themes", str(self.max_themes)),
                ("relevance_threshold", str(self.relevance_threshold)),
                ("relative_relevance", str(self.relative_relevance)), ("per_paper", str(self.per_paper)),
                ("min_supported", str(self.min_supported)), ("judge_answers", str(self.judge_answers)),
                ("read_unsupported", str(self.read_unsupported)),
                ("retrieval_stride", str(self.while_writing.stride)),
                ("retrieval_query_tokens", str(self.while_writing.query_tokens)))


__all__ = ["AskOptions"]
