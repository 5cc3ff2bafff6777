"""GEESE (Zaninello & Magnini, CLiC-it 2024): does an explanation help a model predict
Italian textual entailment? Data, prompts, anonymization, metrics and leaderboard spec."""
