"""Nonparametric masked-LM probability (NP), as used by FActScore's ensemble."""
