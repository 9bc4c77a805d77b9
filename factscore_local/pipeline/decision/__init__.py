"""The rules that turn a fact's signals into a decision, and FActScore from decisions."""
