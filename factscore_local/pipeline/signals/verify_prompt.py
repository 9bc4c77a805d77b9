"""The Retrieve→LM and no-context prompts, in the paper's structure with our own wording.

Structure (FActScore): an instruction naming the topic, the retrieved passages with the
best one last, then the fact followed by "True or False?". The fact comes last so that the
facts of one page that retrieve the same passages share the whole prompt up to the fact.
"""

from __future__ import annotations

from collections.abc import Callable

from factscore_local.declarations.signals import DEFAULT_QUESTION, QUESTIONS
from factscore_local.index.chunking import strip_markers
from factscore_local.prompts import load_demos, load_prompt

# The questions (QUESTIONS, DEFAULT_QUESTION) are declared in declarations/signals.py, where the
# settings read them; this module keeps their names.

# What a prompt ends with when it is not wrapped in the model's chat template.
PLAIN_ANSWER = "\nAnswer:"
# The wording lives in factscore_local/prompts/verify_*.txt.
INSTRUCTION = load_prompt("verify_instruction")
NO_CONTEXT_INSTRUCTION = load_prompt("verify_no_context")
STATEMENT = "Statement: "  # where a prompt stops being shared by the facts of a page
# The line that gives a fact's sentence as context (``fact_context="sentence"``); the quoted
# sentence follows after a space (kept here: a text file's trailing space is easily lost).
SENTENCE = load_prompt("verify_sentence") + " "


def passage_block(title: str, text: str) -> str:
    return f"Title: {title}\nText: {strip_markers(text).strip()}"


def passage_token_counter(tokenize) -> Callable[[object], int]:
    """A memoised count of a passage's tokens as a verification prompt writes it."""
    lengths: dict = {}

    def token_len(p) -> int:
        if p.passage_id not in lengths:
            lengths[p.passage_id] = len(tokenize(passage_block(p.title, p.text))) + 1
        return lengths[p.passage_id]

    return token_len


# Worked examples of the judgement (written for this project; the people are invented),
# in prompts/verify_demo_passage.txt and verify_demos.txt: in order, a stated statement, a
# contradicted one (The Hague), one not mentioned, a pronoun for the topic, a relation
# implied, one not supported (two sons), one implied ("to teach"). They precede the
# instruction, so every prompt shares them.
DEMO_PASSAGE = passage_block(*load_demos("verify_demo_passage", 2)[0])
DEMO_JUDGEMENTS: tuple[tuple[str, str], ...] = load_demos("verify_demos", 2)  # (fact, answer)
DEMOS_INTRO = load_prompt("verify_demos_intro")
DEMOS_OUTRO = load_prompt("verify_demos_outro")


def verification_demos(question: str = DEFAULT_QUESTION) -> str:
    text, (yes, no) = QUESTIONS[question]
    judged = "\n".join(
        f"{STATEMENT}{fact} {text} {yes if answer == 'True' else no}"
        for fact, answer in DEMO_JUDGEMENTS
    )
    return f"{DEMOS_INTRO}\n\n{DEMO_PASSAGE}\n\n{judged}\n\n{DEMOS_OUTRO}\n\n"


def statement_line(atom: str, sentence: str = "", question: str = DEFAULT_QUESTION) -> str:
    """The statement and its question; with the sentence it was taken from as context (for
    its pronouns and references, not as evidence), on a line of its own before the
    statement. The facts of one sentence then share the prompt up to their statement: the
    model reads the sentence once for them (``LocalLM`` evaluates it as a second prefix
    level after the evidence). The statement's tokens follow a sentence that holds them,
    so the ``lm-joint`` NP is read from the prompt without it (``signals``)."""
    line = f"{STATEMENT}{atom.strip()} {QUESTIONS[question][0]}"
    if not sentence.strip():
        return line
    return f'{SENTENCE}"{sentence.strip()}"\n{line}'


def sentence_prefix(prompt: str) -> str:
    """The part of a verification prompt before its fact's sentence (the evidence, shared
    by every sentence of a page); "" when the prompt holds no sentence line."""
    cut = prompt.rfind(SENTENCE, 0, prompt.rindex(STATEMENT))
    return prompt[:cut] if cut >= 0 else ""


def retrieve_lm_prompt(
    topic: str,
    atom: str,
    passages: list[tuple[str, str]],
    demos: bool = False,
    sentence: str = "",
    question: str = DEFAULT_QUESTION,
) -> str:
    """passages: (title, text) best first; they are written in reverse, best last. demos:
    worked examples first; sentence: the fact's sentence, before the statement."""
    context = "\n\n".join(passage_block(title, text) for title, text in reversed(passages))
    demos_text = verification_demos(question) if demos else ""
    return (
        f"{demos_text}{INSTRUCTION.format(topic=topic)}\n\n"
        f"{context}\n\n{statement_line(atom, sentence, question)}"
    )


def no_context_prompt(topic: str, atom: str, question: str = DEFAULT_QUESTION) -> str:
    instruction = NO_CONTEXT_INSTRUCTION.format(topic=topic)
    return f"{instruction}\n\n{statement_line(atom, '', question)}"


OPEN_INSTRUCTION = load_prompt("verify_open")
OPEN_NO_CONTEXT = load_prompt("verify_open_no_context")


def open_prompt(
    atom: str, passages: list[tuple[str, str]], question: str = DEFAULT_QUESTION
) -> str:
    """The Retrieve→LM prompt without a topic (evidence from the whole index): passages
    (title, text) best first, written best last."""
    line = statement_line(atom, "", question)
    if not passages:  # no evidence: is the statement true?
        return f"{OPEN_NO_CONTEXT}\n\n{line}"
    context = "\n\n".join(passage_block(title, text) for title, text in reversed(passages))
    return f"{OPEN_INSTRUCTION}\n\n{context}\n\n{line}"
