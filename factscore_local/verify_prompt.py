"""The Retrieve→LM and no-context prompts, in the paper's structure with our own wording.

Structure (FActScore): an instruction naming the topic, the retrieved passages with the
best one last, then the fact followed by "True or False?". The fact comes last so that the
facts of one page that retrieve the same passages share the whole prompt up to the fact.
"""

from __future__ import annotations

from index.chunking import strip_markers

INSTRUCTION = "Decide whether a statement about {topic} is supported by the passages below."
NO_CONTEXT_INSTRUCTION = "Decide whether this statement about {topic} is true."
STATEMENT = "Statement: "  # where a prompt stops being shared by the facts of a page


def passage_block(title: str, text: str) -> str:
    return f"Title: {title}\nText: {strip_markers(text).strip()}"


def retrieve_lm_prompt(topic: str, atom: str, passages: list[tuple[str, str]]) -> str:
    """passages: (title, text) best first; they are written in reverse, best last."""
    context = "\n\n".join(passage_block(title, text) for title, text in reversed(passages))
    return (
        f"{INSTRUCTION.format(topic=topic)}\n\n{context}\n\n"
        f"{STATEMENT}{atom.strip()} True or False?"
    )


def no_context_prompt(topic: str, atom: str) -> str:
    return (
        f"{NO_CONTEXT_INSTRUCTION.format(topic=topic)}\n\n{STATEMENT}{atom.strip()} True or False?"
    )


OPEN_INSTRUCTION = "Decide whether the statement below is supported by the passages."
OPEN_NO_CONTEXT = "Decide whether this statement is true."


def open_prompt(atom: str, passages: list[tuple[str, str]]) -> str:
    """The Retrieve→LM prompt without a topic (evidence from the whole index): passages
    (title, text) best first, written best last."""
    if not passages:  # no evidence: is the statement true?
        return f"{OPEN_NO_CONTEXT}\n\n{STATEMENT}{atom.strip()} True or False?"
    context = "\n\n".join(passage_block(title, text) for title, text in reversed(passages))
    return f"{OPEN_INSTRUCTION}\n\n{context}\n\n{STATEMENT}{atom.strip()} True or False?"
