"""Transcripts: lines that open with a speaker label ("Bart: ...", "Assistant: ...").

A query can be a conversation so far, written one turn per line behind the speaker's label. The
agent's label ("Assistant:", "助手：") is layout, not content: embedded with the words, it pulls
the query's vector towards any text written the same way. A person's label ("Bart:", "User:")
says whose life the conversation is about, and stays. And the latest turn is what needs
answering: `text_to_embed` gives such a query without the agent's labels and with its latest
user-side turn once more at the end (the keyword side keeps every label and weighs the last
line's words more, `tuning.last_line_weight`).
"""

from __future__ import annotations

import re

__all__ = [
    "AGENT_ROLES",
    "ROLES",
    "SPEAKER_RE",
    "is_transcript",
    "speaker_labels",
    "text_to_embed",
    "without_role_labels",
]

SPEAKER_RE = re.compile(r"[ \t]*[^\W\d_][\w.'’-]*(?: [\w.'’-]+){0,2}[ \t]*")
"""What a transcript line may open with before its colon: a speaker of up to three words."""

# a line's speaker label: the speaker, a colon (ASCII or full-width), then the utterance
_LINE_LABEL_RE = re.compile(r"^(" + SPEAKER_RE.pattern + r")[:：][ \t]*(?=\S)", re.MULTILINE)
AGENT_ROLES = frozenset("assistant ai system bot tool model 助手 助理 系统 机器人".split())  # noqa: SIM905
"""Labels of the agent's side of a conversation (lower-cased): layout, removed for embedding."""
ROLES = AGENT_ROLES | frozenset(("user", "human", "用户"))
"""Labels that name a role rather than a person (lower-cased). The user's label is kept for
embedding: like a person's name, it says whose life the conversation is about."""
_MAX_LABEL_CHARS = 30


def speaker_labels(text: str) -> list[str]:
    """The speaker label of each line that opens with one, in order (lower-cased, trimmed)."""
    return [
        m.group(1).strip().lower()
        for m in _LINE_LABEL_RE.finditer(text)
        if len(m.group(1).strip()) <= _MAX_LABEL_CHARS
    ]


def is_transcript(text: str) -> bool:
    """Two or more lines open with a speaker label, and a label recurs or names a role (a
    stack trace's "TypeError: ..." / "Error: ..." lines are neither)."""
    labels = speaker_labels(text)
    if len(labels) < 2:
        return False
    return len(set(labels)) < len(labels) or any(lab in ROLES for lab in labels)


def without_role_labels(text: str) -> str:
    """`text` with the agent's labels ("Assistant: ") removed from its lines when it is a
    transcript; the user's or a person's label, and any text that is not a transcript, stay."""
    return _drop_agent_labels(text) if is_transcript(text) else text


def text_to_embed(text: str) -> str:
    """What a query's vector is made from: `text` itself, or for a transcript the text without
    the agent's labels followed by its latest user-side turn (a line that is not the agent's)
    once more, so that the turn that needs answering weighs most."""
    if not is_transcript(text):
        return text
    own = [
        ln for ln in text.split("\n") if ln.strip() and not _agent_label(_LINE_LABEL_RE.match(ln))
    ]
    out = _drop_agent_labels(text)
    return f"{out}\n{own[-1].strip()}" if own else out


def _agent_label(m: re.Match[str] | None) -> bool:
    """Whether a line-label match is the agent's label."""
    return m is not None and m.group(1).strip().lower() in AGENT_ROLES


def _drop_agent_labels(text: str) -> str:
    return _LINE_LABEL_RE.sub(lambda m: "" if _agent_label(m) else m.group(0), text)
