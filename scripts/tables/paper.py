"""The paper's figures that the tables print beside the dev set's: full 183-topic release;
the Inst-LLaMA 7B rows of Tables 3 and 9."""

# The paper's numbers (full 183-topic release; Inst-LLaMA 7B rows of Tables 3 and 9).
PAPER_T1 = {
    "InstructGPT": {"responding": 99.5, "tokens": 110.6, "sentences": 6.2, "facts": 26.3,
                    "S": 42.3, "NS": 43.2, "IR": 14.0, "abstains": 0.5, "factscore": 42.5},
    "ChatGPT": {"responding": 85.8, "tokens": 154.5, "sentences": 7.9, "facts": 34.7,
                "S": 50.0, "NS": 27.5, "IR": 8.3, "abstains": 14.2, "factscore": 58.3},
    "PerplexityAI": {"responding": 90.7, "tokens": 151.0, "sentences": 9.8, "facts": 40.8,
                     "S": 64.9, "NS": 11.1, "IR": 14.8, "abstains": 9.3, "factscore": 71.5},
}  # fmt: skip
PAPER_T3 = {  # ER (FS) per subject, Inst-LLaMA 7B as evaluator
    "always-supported": ((57.5, 100.0), (41.7, 100.0), (28.5, 100.0)),
    "always-not-supported": ((42.5, 0.0), (58.3, 0.0), (71.5, 0.0)),
    "random": ((7.5, 50.0), (8.3, 50.0), (21.5, 50.0)),
    "no-context-lm": ((7.1, 49.6), (7.8, 50.5), (34.7, 36.8)),
    "np": ((14.8, 57.3), (13.7, 72.0), (1.4, 72.9)),
    "retrieve-lm": ((14.1, 56.6), (17.1, 75.4), (0.1, 71.6)),
    "retrieve-lm+np": ((1.4, 41.1), (0.4, 58.7), (9.9, 61.6)),
}
PAPER_T9 = {  # micro-F1 on not-supported facts
    "always-supported": (0.0, 0.0, 0.0),
    "always-not-supported": (71.4, 58.3, 30.9),
    "random": (52.2, 45.0, 25.7),
    "no-context-lm": (61.2, 52.2, 31.4),
    "np": (70.0, 56.6, 51.4),
    "retrieve-lm": (78.7, 61.9, 51.1),
    "retrieve-lm+np": (83.2, 70.5, 53.3),
}
