"""The prompt texts ship as package data (``factscore_local/prompts/*.txt``), and the prompts
built from them are byte for byte those the code built before they moved there: the result
caches are keyed by hashes of the exact prompts, so one changed byte would orphan every
committed benchmark cache. The hashes below were recorded from the code before the move."""

from __future__ import annotations

import hashlib
import json

import pytest

from factscore_local.methods.factcheck import pipeline as factcheck
from factscore_local.methods.veriscore import core as veriscore_core
from factscore_local.methods.veriscore import pipeline as veriscore
from factscore_local.pipeline.decomposition import decompose
from factscore_local.pipeline.signals import verify_prompt
from factscore_local.prompts import PromptError, load_demos, load_prompt, prompt_names

# Real sentences and passages (the demo bios and an enwiki-style lead, with FActScore's
# <s> markers that prompts drop).
SENTENCES = [
    "Albert Einstein was a German-born theoretical physicist who developed the general "
    "theory of relativity.",
    "He was born in Ulm in 1885 and received the 1921 Nobel Prize in Physics.",
    "Ayn Rand was a Russian-born American novelist known for The Fountainhead and Atlas Shrugged.",
]
FACTS = ["Albert Einstein was born in Ulm.", "  He received the 1921 Nobel Prize in Physics. "]
PASSAGES = [
    (
        "Albert Einstein",
        "<s>Albert Einstein (14 March 1879 – 18 April 1955) was a German-born theoretical "
        "physicist.</s><s>He received the 1921 Nobel Prize in Physics.</s>",
    ),
    ("Ulm", "Ulm is a city on the River Danube in Baden-Württemberg, Germany."),
]


def build_all() -> dict[str, str]:
    """Every kind of prompt the package builds, for the inputs above."""
    out: dict[str, str] = {}
    selector = decompose.DemoSelector(decompose.load_demos())
    for s, sentence in enumerate(SENTENCES):
        for name, instr in (
            ("ours", decompose.DEFAULT_INSTRUCTION),
            ("reference", decompose.REFERENCE_INSTRUCTION),
        ):
            out[f"decompose/{name}/{s}"] = decompose.build_prompt(sentence, selector, instr)
            out[f"decompose/{name}/stop"] = json.dumps(decompose.stop_sequences(instr))
    for question in verify_prompt.QUESTIONS:
        out[f"verify/demos/{question}"] = verify_prompt.verification_demos(question)
        for f, fact in enumerate(FACTS):
            for demos in (False, True):
                for sentence in ("", SENTENCES[1]):
                    key = f"verify/retrieve/{question}/{f}/{demos}/{bool(sentence)}"
                    out[key] = verify_prompt.retrieve_lm_prompt(
                        "Albert Einstein", fact, PASSAGES, demos, sentence, question
                    )
            out[f"verify/no-context/{question}/{f}"] = verify_prompt.no_context_prompt(
                "Albert Einstein", fact, question
            )
            out[f"verify/open/{question}/{f}"] = verify_prompt.open_prompt(fact, PASSAGES, question)
            out[f"verify/open-empty/{question}/{f}"] = verify_prompt.open_prompt(fact, [], question)
    paragraphs = [SENTENCES[:2], SENTENCES[2:]]
    for w, window in enumerate(veriscore_core.windows(paragraphs, "Tell me a bio.")):
        out[f"veriscore/extract/{w}"] = veriscore.extraction_prompt(window.text)
        out[f"veriscore/resolve/{w}"] = veriscore.resolution_prompt(window.text, FACTS[1])
    for mode in veriscore.VERIFY_INSTRUCTION:
        out[f"veriscore/verify/{mode}"] = veriscore.verification_prompt(FACTS[0], PASSAGES, mode)
    out["factcheck/stance"] = factcheck.stance_prompt(FACTS[1], PASSAGES[0][1])
    out["factcheck/correction"] = factcheck.correction_prompt(FACTS[0], PASSAGES)
    return out


def digest(prompts: dict[str, str]) -> dict[str, str]:
    return {k: hashlib.sha256(v.encode("utf-8")).hexdigest()[:16] for k, v in prompts.items()}


# Recorded with the code before the prompts moved to text files (commit e8b16b9).
RECORDED: dict[str, str] = {
    "decompose/ours/0": "6e735e855372d0b4",
    "decompose/ours/stop": "84fe22c081b18552",
    "decompose/reference/0": "a8f4d499e56fe903",
    "decompose/reference/stop": "95648c9fbf695b65",
    "decompose/ours/1": "633123b76976d726",
    "decompose/reference/1": "ed696412c25aac4c",
    "decompose/ours/2": "5dd7426934e05383",
    "decompose/reference/2": "67d0ccbc6a56e1c5",
    "verify/demos/true-false": "160f2d79c5818f85",
    "verify/retrieve/true-false/0/False/False": "014944716ca80c9c",
    "verify/retrieve/true-false/0/False/True": "485e94b75846ace0",
    "verify/retrieve/true-false/0/True/False": "37ba1c85163c2205",
    "verify/retrieve/true-false/0/True/True": "f0b35dea653da10d",
    "verify/no-context/true-false/0": "9dbc919a60cec739",
    "verify/open/true-false/0": "2fcff80cf5c7c147",
    "verify/open-empty/true-false/0": "1851f0b4adf2ea93",
    "verify/retrieve/true-false/1/False/False": "4210727c05081412",
    "verify/retrieve/true-false/1/False/True": "fdd9e2021b77bf32",
    "verify/retrieve/true-false/1/True/False": "e5f7ba2a3e6f2177",
    "verify/retrieve/true-false/1/True/True": "f0da2c42b8489c10",
    "verify/no-context/true-false/1": "415eb6b661c0227c",
    "verify/open/true-false/1": "6d539120c309f26c",
    "verify/open-empty/true-false/1": "3b9495bc12a3cec8",
    "verify/demos/yes-no": "1378b240f2ebaece",
    "verify/retrieve/yes-no/0/False/False": "fe41fb71312e2b8b",
    "verify/retrieve/yes-no/0/False/True": "7ef01f9e678d221d",
    "verify/retrieve/yes-no/0/True/False": "9a2f172991ac4133",
    "verify/retrieve/yes-no/0/True/True": "500313eb9039de6a",
    "verify/no-context/yes-no/0": "540aa82b9f0b7d9d",
    "verify/open/yes-no/0": "0a8c0c9b532a4a4c",
    "verify/open-empty/yes-no/0": "f34e516dd85d1a4b",
    "verify/retrieve/yes-no/1/False/False": "e70fa60e1101e172",
    "verify/retrieve/yes-no/1/False/True": "6d98257ad160ef09",
    "verify/retrieve/yes-no/1/True/False": "5ccfedbd0385cc7a",
    "verify/retrieve/yes-no/1/True/True": "b005ce5e930b73a9",
    "verify/no-context/yes-no/1": "22895e5733f69d1b",
    "verify/open/yes-no/1": "ab38946b958e7cf4",
    "verify/open-empty/yes-no/1": "5a10c5244db99e1c",
    "veriscore/extract/0": "1230f822407cbbb4",
    "veriscore/resolve/0": "57bdf41af172bb20",
    "veriscore/extract/1": "2bd98dcd9a17f97d",
    "veriscore/resolve/1": "57bdf41af172bb20",
    "veriscore/extract/2": "dfe800d56a7232ed",
    "veriscore/resolve/2": "713393f14a113e92",
    "veriscore/verify/binary": "05957d72f280e7c8",
    "veriscore/verify/ternary": "f2efc06384620c2c",
    "factcheck/stance": "436870daf39b4581",
    "factcheck/correction": "c195ad09da4a08ff",
}


def test_prompts_are_byte_identical_to_the_recorded_ones():
    assert digest(build_all()) == RECORDED


def test_every_prompt_file_is_used_and_loads():
    names = prompt_names()
    assert names, "no prompt files shipped"
    for name in names:
        assert load_prompt(name) == load_prompt(name)  # cached, and readable
    built = "\n".join(build_all().values())
    # Every instruction file's text (its first line at least) reaches some prompt.
    for name in names:
        first = load_prompt(name).split("{", 1)[0].splitlines()[0]
        assert first in built, name


def test_unknown_names_and_bad_demo_files_fail_clearly():
    with pytest.raises(PromptError, match="no prompt named 'nope'"):
        load_prompt("nope")
    with pytest.raises(PromptError, match="fields"):
        load_demos("verify_demos", 5)
