"""Checks of a report's words, for every face: no sentence twice on a page or in a
section, no link named twice ("over LTE over lte"), no range whose ends read the same
("168 µs to 168 µs"). Each returns what it found, so a failing test prints it."""

from __future__ import annotations

import re
from collections import Counter

#: A sentence shorter than this many words may well recur (a cell, "No warnings.").
MIN_WORDS = 8
_SENTENCE_END = re.compile(r"(?<=[.!?:])\s+(?=[A-Z*(])")
# One word between: a PDF's text runs table cells together ("over LAN X25519 over LTE").
_OVER_OVER = re.compile(r"\bover (?:the )?[\w\-]+ over (?:the )?(?:emulated )?(?:link )?[\w\-]+")
_NUMBER = r"\d[\d,]*(?:\.\d+)?"
_UNIT = r"(?:\s?(?:ns|µs|ms|s|B|KiB|MiB|GiB|%|×|calls|kbit/s|Mbit/s))?"
# " to " and "–" are how the report writes a range; a spaced ASCII hyphen is not (in a PDF's
# text, "2.21 - 2.21" is two cells with a missing one between them, shown as "-").
_RANGE = re.compile(rf"(?<![\w.,])({_NUMBER}{_UNIT}) (?:to|–) \1(?![\w.,])|(?<![\w.,])({_NUMBER}{_UNIT})–\2(?![\w.,])")


def sentences(text: str) -> list[str]:
    """The prose sentences of `text`, each line (a Markdown paragraph, a bullet, a PDF line) cut
    at its sentence ends; Markdown table rows and headings left out."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith(("|", "#"))]
    return [
        " ".join(s.split())
        for line in lines
        for s in _SENTENCE_END.split(line)
        if len(s.split()) >= MIN_WORDS and _is_prose(s)
    ]


#: A job's label with its size and mode ("X25519 over LTE · 1 KiB · loopback"), a warning's
#: list of jobs being a list of them: one job may be under several warnings.
_LABELS = re.compile(r"[^;·]+ · [^;·]+ · [^;·]+(?:; [^;·]+ · [^;·]+ · [^;·]+)*")


def _is_prose(text: str) -> bool:
    """Words, not a table header or a row of cells run together ("Offered/s Achieved/s Errors
    ..."), nor a list of jobs' labels."""
    if _LABELS.fullmatch(text.strip()):
        return False
    return sum(1 for word in text.split() if word.isalpha() and word.islower() and len(word) > 2) >= 4


def repeated_sentences(text: str) -> list[str]:
    return [s for s, n in Counter(sentences(text)).items() if n > 1]


def doubled_links(text: str) -> list[str]:
    """ "X over LTE over the emulated link lte": a place named twice in one breath."""
    return [m.group(0) for m in _OVER_OVER.finditer(" ".join(text.split()))]


def degenerate_ranges(text: str) -> list[str]:
    return [m.group(0) for m in _RANGE.finditer(" ".join(text.split()))]


def markdown_sections(markdown: str) -> list[str]:
    """The Markdown report cut at its headings: one string per section or subsection."""
    return re.split(r"\n(?=#{1,6} )", markdown)


def problems(text: str) -> list[str]:
    """Everything the three checks find in one page or section."""
    return (
        [f"repeated: {s}" for s in repeated_sentences(text)]
        + [f"link twice: {s}" for s in doubled_links(text)]
        + [f"degenerate range: {s}" for s in degenerate_ranges(text)]
    )
