"""The declarations: what a user may choose, as data the settings check and the pipeline
reads. The values each stage's settings may take (``decomposition.py``, ``evidence.py``,
``signals.py``) and the rule registry the ``verifier`` setting names (``features.py``, the
named features over the signal values; ``rules.py``, the specs of ``data/rules.json``;
``verifiers.py``, the rules built from them).

A layer of its own, below the LM (docs: Layers): it may import the runtime's helpers and
the shipped data (``factscore_local.data``), never the LM, ``config``, the pipeline or
anything above them, so that the settings check a value without loading a stage. This
module imports nothing: loading one declaration loads no other.
"""
