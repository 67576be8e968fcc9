"""What a reply only quotes of the assistant's memory, so that it is not kept as evidence.

An assistant that was given recalled memories often says them back before answering ("From
what I remember: - User follows a keto diet. Some lunches: …", "我记得的是：- 用户的女儿每周六
上午九点半上钢琴课。建议…", "根据我的记忆，你用的是 VS Code：可以装 Ruff"). Such a quote is no
new evidence: after a correction it restates the old value in an episode dated after the
change. The write path knows the recalled memories when the middleware gave them
(`episodes.without_echoes`); `without_recall_quotes` finds the quote by its form alone, for
replies written anywhere else (a transcript given to `Memory.add`).
"""

from __future__ import annotations

import re

from langmem_plus.errors import ValidationError

__all__ = ["without_recall_quotes"]

# a reply's words that announce what it remembers of the user
_LEAD_IN = re.compile(
    r"^\s*(?:"
    r"(?:from|based on) what I (?:remember|recall|have (?:noted|saved|stored))|"
    r"as (?:far as )?I (?:remember|recall)|if I (?:remember|recall) (?:right|correctly)|"
    r"according to my (?:memory|memories|notes|records)|my (?:notes|memory) says?|"
    r"I (?:remember|recall|have (?:it )?noted) that|"
    r"我记得的是|我记得是|我记得|根据我的记忆|根据记忆|按照我的记忆|据我(?:所)?记得|"
    r"我这边记(?:的|录的)是|我记下的是|记忆里"
    r")",
    re.I,
)
# a quoted memory item: a bullet right after the lead-in ("- User drives a Civic", "- Biscuit
# takes 10 mg …": what is remembered may be about a pet, a partner, a thing)
_ITEM = re.compile(r"^\s*[-•*·]\s*\S")
# pieces of a reply: sentences, and a lead-in cut at its colon ("9:30" is not cut)
_PIECES = re.compile(r"(?<=[。！？；：\n])|(?<=[.!?;:])\s+(?=\S)")


def without_recall_quotes(text: str) -> str:
    """`text` (an assistant turn) less what it quotes of recalled memories: a sentence that
    opens with a recall lead-in (up to its colon or the sentence's end) and the bulleted
    memory items ("- User …", "- 用户…", "- Biscuit takes …") that follow it, across the line
    breaks between them. A reply with no lead-in is returned unchanged, so
    an ordinary reply that mentions the user loses nothing."""
    if not isinstance(text, str):
        raise ValidationError("text must be a string")
    pieces = [p for p in _PIECES.split(text) if p]
    if not any(_LEAD_IN.match(p) for p in pieces):
        return text
    kept: list[str] = []
    quoting = False
    for piece in pieces:
        if _LEAD_IN.match(piece):
            quoting = True
            continue
        if quoting and (_ITEM.match(piece) or not piece.strip()):
            continue  # an item, or the line break after the lead-in's colon
        quoting = False
        kept.append(piece)
    out = ""
    for piece in kept:  # glue back: a space between Latin pieces, none after CJK punctuation
        if out and not out.endswith(("\n", " ")) and not re.search(r"[。！？；：]$", out):
            out += " "
        out += piece
    return out.strip()
