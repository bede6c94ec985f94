"""Turning chat messages into the one prompt string a model was trained on.

The template comes from the GGUF's ``tokenizer.chat_template`` (the Hugging Face Jinja
template the converter copied in), rendered the way transformers renders it. When a file has
no template, or its template cannot render our messages, ChatML is the fallback: it is what
most small instruction models (SmolLM2, Qwen) use and it degrades gracefully on the rest.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from engine.generate.base import ChatMessage

log = logging.getLogger(__name__)

CHATML_STOPS = ("<|im_end|>",)


def render_chatml(messages: Sequence[ChatMessage]) -> str:
    """The fallback template: ``<|im_start|>role\\ncontent<|im_end|>`` turns, then the assistant's."""
    turns = "".join(f"<|im_start|>{m.role}\n{m.content}<|im_end|>\n" for m in messages)
    return turns + "<|im_start|>assistant\n"


def _raise_exception(message: str) -> None:
    raise jinja2.exceptions.TemplateError(message)


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


class ChatTemplate:
    """A model's chat template with ChatML as the fallback; ``source`` says which one is in use."""

    def __init__(self, template: str | None, *, bos_token: str = "", eos_token: str = "") -> None:
        self.bos_token = bos_token
        self.eos_token = eos_token
        self.source = "chatml-fallback"
        self._compiled: jinja2.Template | None = None
        if template:
            environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                        extensions=["jinja2.ext.loopcontrols"])
            environment.globals.update(raise_exception=_raise_exception, strftime_now=_strftime_now)
            try:
                self._compiled = environment.from_string(template)
                self.source = "gguf"
            except jinja2.TemplateError as exc:
                log.warning("The model's chat template does not compile (%s); using ChatML.", exc)

    @property
    def stop_strings(self) -> tuple[str, ...]:
        """Text that ends a turn even if the model does not emit its end-of-generation token."""
        return CHATML_STOPS if self.source != "gguf" else ()

    def render(self, messages: Sequence[ChatMessage]) -> str:
        """The prompt text, ending where the assistant's reply begins."""
        if self._compiled is not None:
            for attempt in (list(messages), _fold_system(messages)):
                try:
                    return self._render(attempt)
                except jinja2.TemplateError as exc:  # e.g. "System role not supported"
                    log.debug("Chat template refused %d messages: %s", len(attempt), exc)
            log.warning("The model's chat template cannot render these messages; using ChatML.")
        return render_chatml(messages)

    def _render(self, messages: Sequence[ChatMessage]) -> str:
        assert self._compiled is not None
        payload: list[dict[str, Any]] = [{"role": m.role, "content": m.content} for m in messages]
        return self._compiled.render(messages=payload, add_generation_prompt=True, bos_token=self.bos_token,
                                     eos_token=self.eos_token)


def _fold_system(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """Templates without a system role (Gemma, Mistral): prepend the system text to the first user turn."""
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    rest = [m for m in messages if m.role != "system"]
    if system and rest and rest[0].role == "user":
        rest[0] = ChatMessage("user", f"{system}\n\n{rest[0].content}")
    return rest
