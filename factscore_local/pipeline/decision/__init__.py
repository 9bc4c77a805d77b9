"""Why each fact was decided as it was (``reasons.py``) and FActScore from decisions
(``scoring.py``); the rules themselves are declared in ``factscore_local.declarations``."""
