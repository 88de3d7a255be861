"""Coverage-guided fuzzing of every implementation's parsers (`msgbench fuzz`).

corpus: the shared seed corpora; engines: each language's fuzzer; campaign: campaigns, replays
and the committed record. docs/robustness.md is the guide.
"""
