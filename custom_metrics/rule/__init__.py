"""RULE (Kawabata & Sugawara, EMNLP 2023): does a model understand why each ReClor option is
right or wrong? Data, prompts, task variants, Table 2 metrics, the five-shot protocol and
the leaderboard spec."""
