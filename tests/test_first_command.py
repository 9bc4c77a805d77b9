"""The first-command benchmark reads its stages from what setup.sh, ``fscore demo`` and
``/usr/bin/time -v`` print (scripts/notebook/bench_first_command.py)."""

from __future__ import annotations

from scripts.notebook.bench_first_command import stages, wall_seconds

OUTPUT = """\
setup: creating .venv
setup: virtual environment took 4 s
setup: compiling llama-cpp-python==0.3.36 in the background (log: .venv/.llama-build.log)
setup: factscore-local and its dependencies but llama.cpp took 120 s
setup: embedded models and sources took 21 s
setup: llama-cpp-python compiled (waited for the rest of its build) took 35 s
setup: the llama extra took 2 s
demo: building demo-index from enwiki-excerpt.xml.bz2
demo: 106 pages, 99 redirects, 2494 passages in 14.2s
demo: 4 bios, 25 facts scored in 174.0s
setup: demo took 201 s
\tElapsed (wall clock) time (h:mm:ss or m:ss): 6:23.41
\tMaximum resident set size (kbytes): 3250176
"""


def test_stages_come_from_the_printed_lines():
    figures = stages(OUTPUT)
    assert figures["stages/virtual environment/seconds"] == 4
    waited = "llama-cpp-python compiled (waited for the rest of its build)"
    assert figures[f"stages/{waited}/seconds"] == 35
    assert figures["stages/fscore demo: index of 106 pages (2494 passages)/seconds"] == 14.2
    assert figures["stages/fscore demo: scoring 4 bios (25 facts)/seconds"] == 174.0
    assert figures["stages/demo/seconds"] == 201
    assert figures["stages/whole command/seconds"] == 383.4
    assert figures["peak_rss_gb"] == 3.1
    assert "setup: creating .venv" not in str(figures)  # a line without a time is no stage


def test_wall_clock_forms():
    assert wall_seconds("8:43.12") == 523.1
    assert wall_seconds("1:02:03") == 3723.0
