"""Untrusted text: what comes from PDFs, datastore records and the model is shown as text, names
taken from data never become paths outside their folder, and no shell ever sees user data."""

from __future__ import annotations

import ast
from html.parser import HTMLParser
from pathlib import Path

import pytest

from engine.bibliography import Bibliography
from engine.datastore.manifest import is_safe_member_name
from engine.datastore.registry import check_name
from engine.errors import EngineError
from engine.render.html import to_html
from engine.types import Answer, AnswerMode, AnswerSentence, Citation, Document, Reference

REPO = Path(__file__).resolve().parents[2]
HOSTILE = ['<script>alert("x")</script>', '<img src=x onerror=alert(1)>', '"><a href="javascript:alert(1)">go</a>',
           "<style>body{display:none}</style>"]
# What must never appear in rendered HTML if the hostile strings were escaped.
LIVE_MARKUP = ["<script", "<img", "<style", 'href="javascript:', "<a href=\"javascript"]


def hostile_answer(payload: str) -> Answer:
    reference = Reference(n=1, passage_id="d-0000", doc_id="d", source="library",
                          bib=Bibliography(f"Title {payload}", authors=(payload,), url=payload),
                          text=f"Passage text {payload} with a claim.", page=1)
    sentence = AnswerSentence(text=f"A claim {payload} [1].", supported=True,
                              citations=(Citation(1, "d-0000", payload, 0, len(payload), 0.9),))
    return Answer(question=f"Why {payload}?", text=sentence.text, sentences=(sentence,), references=(reference,),
                  mode=AnswerMode.WRITTEN, sections=(payload,), contexts=(reference,), notice=payload)


def assert_inert(html_text: str) -> None:
    lowered = html_text.lower()
    for live in LIVE_MARKUP:
        assert live not in lowered, (live, html_text[:400])


@pytest.mark.parametrize("payload", HOSTILE)
def test_engine_answer_html_escapes_paper_model_and_record_text(payload: str) -> None:
    rendered = to_html(hostile_answer(payload))
    assert_inert(rendered)
    assert "&lt;" in rendered  # the text is still there, as text


@pytest.mark.parametrize("payload", HOSTILE)
def test_ui_answer_and_details_html_escape_untrusted_text(payload: str) -> None:
    pytest.importorskip("PySide6")
    from ui.answer_html import answer_html, streaming_html
    from ui.document_details import details_html

    assert_inert(answer_html(hostile_answer(payload)))
    assert_inert(streaming_html(f"streamed {payload}", payload))
    document = Document(id="abcd", content_hash="abcd", path=f"/papers/{payload}.pdf",
                        bib=Bibliography(payload, authors=(payload,), doi=payload, arxiv_id=payload), abstract=payload,
                        error=payload)
    assert_inert(details_html([document]))


@pytest.mark.parametrize("name", ["../evil", "a/b", "..", ".", "", "/etc", "x\\y", "library", "C:evil", "a" * 65,
                                  "-rf", "name with space", "naïve"])
def test_datastore_names_cannot_leave_their_folder(name: str) -> None:
    with pytest.raises(EngineError):
        check_name(name)


@pytest.mark.parametrize("name", ["../x.jsonl", "/etc/passwd", "a/b.jsonl", "..", "c:\\x", "x\\..\\y", ""])
def test_pack_member_names_cannot_escape_the_pack(name: str) -> None:
    assert not is_safe_member_name(name)


def _shell_calls(path: Path) -> list[str]:
    """Calls that hand a command line to a shell: os.system/popen, any subprocess call with
    shell=True, or a subprocess call whose command is a single string (built, maybe, from data)."""
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = ast.unparse(node.func)
        where = f"{path.relative_to(REPO)}:{node.lineno}: {name}"
        if name in ("os.system", "os.popen", "os.execl", "os.spawnl", "commands.getoutput"):
            found.append(where)
        if name.startswith("subprocess.") or name in ("Popen", "run", "check_output", "check_call", "call"):
            if any(k.arg == "shell" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
                   for k in node.keywords):
                found.append(where + " shell=")
            if name.startswith("subprocess.") and node.args and isinstance(node.args[0], (ast.JoinedStr, ast.BinOp)):
                found.append(where + " command built as one string")
    return found


def test_no_shell_calls_with_user_data_in_engine_ui_or_desktop() -> None:
    calls = [call for package in ("engine", "ui", "desktop") for path in sorted((REPO / package).rglob("*.py"))
             for call in _shell_calls(path)]
    assert calls == []


# --- Markdown export (quire ask --markdown, the app's Markdown… button) ------------------------------

MARKDOWN_ATTACKS = [*HOSTILE, "[click](javascript:alert(1))", "![pixel](http://tracker.example/p.png)",
                    "<a href='javascript:alert(1)'>go</a>", "`code` and **bold** and _it_",
                    "\n# Heading\n- item", "[1]: javascript:alert(1)", "<javascript:alert(1)>",
                    "[x](<javascript:alert(1)>)", "&lt;script&gt;alert(1)&lt;/script&gt;"]
_ALLOWED_TAGS = {"p", "em", "strong", "h2", "h3", "ul", "li", "blockquote", "a"}


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def rendered_markdown_tags(markdown: str) -> list[tuple[str, dict[str, str | None]]]:
    """What a CommonMark renderer that passes inline HTML through (as GitHub's and most editors do) makes of it."""
    markdown_it = pytest.importorskip("markdown_it")
    parser = _Tags()
    parser.feed(markdown_it.MarkdownIt("commonmark", {"html": True}).render(markdown))
    return parser.tags


@pytest.mark.parametrize("payload", MARKDOWN_ATTACKS)
def test_markdown_export_renders_untrusted_text_as_text(payload: str) -> None:
    from engine.render.markdown import to_markdown

    markdown = to_markdown(hostile_answer(payload))
    tags = rendered_markdown_tags(markdown)
    assert {tag for tag, _ in tags} <= _ALLOWED_TAGS, (tags, markdown)
    for tag, attributes in tags:
        if tag == "a":  # http(s) and DOIs, and Quire's own link to open a cited page in the app
            assert str(attributes.get("href", "")).startswith(("http://", "https://", "quire://open?")), (
                attributes, markdown)
    assert "javascript:" not in " ".join(str(a) for _, a in tags).lower()
    assert "<" not in markdown.replace("](<", "")  # no raw angle bracket but Quire's own link syntax


def test_markdown_export_links_only_http_urls_dois_and_quires_own_open_links() -> None:
    from engine.render.markdown import to_markdown

    references = (
        Reference(1, "a-0000", "a", "library", Bibliography("With a DOI", doi="10.1000/xyz(1)"), "Text.", page=1),
        Reference(2, "b-0000", "b", "cs", Bibliography("With a URL", url="https://openreview.net/forum?id=a_b)c"),
                  "Text."),
        Reference(3, "c-0000", "c", "cs", Bibliography("With a script URL", url="javascript:alert(1)"), "Text."),
        Reference(4, "d-0000", "d", "cs",
                  Bibliography("With a data URL", url="data:text/html,<script>alert(1)</script>"), "Text."),
    )
    sentences = tuple(AnswerSentence(f"Claim [{r.n}].", (Citation(r.n, r.passage_id, "Text.", 0, 5, 0.9),), True)
                      for r in references)
    answer = Answer(question="Q?", text="", sentences=sentences, references=references, mode=AnswerMode.WRITTEN)
    hrefs = [str(attrs.get("href")) for tag, attrs in rendered_markdown_tags(to_markdown(answer)) if tag == "a"]
    assert hrefs == ["https://doi.org/10.1000/xyz(1)", "quire://open?paper=a&page=1&passage=a-0000&quote=Text.",
                     "https://openreview.net/forum?id=a_b)c"]
